"""SDK for writing DRA drivers in Python for the v1.30 and v1.34 kubelets (asyncio,
``grpc.aio``).

1.30: a driver supplies ``prepare``/``unprepare`` callbacks that receive typed :class:`Claim`
objects and publishes its named-resources instances with :meth:`Driver.publish`; the SDK serves
plugin registration and the DRA ``v1alpha3.Node`` API on unix sockets. 1.34: ``prepare_claims``
/``unprepare_claims`` take batches of v1 ResourceClaims the SDK read from the API, the SDK
serves ``v1.DRAPlugin`` and ``v1beta1.DRAPlugin``, and :meth:`Driver.publish_resources` writes
the driver's ResourceSlices. See ``docs/driver-sdk.md``; :mod:`kubedra.driver.testing` has a
fake kubelet (and a 1.34 API server) for tests.
"""

from kubedra.driver.cdi import CDIError
from kubedra.driver.claims import Claim, ClaimError, ClaimRef, Device, PrepareResult
from kubedra.driver.plugin import Driver, dra_socket_path, registration_socket_path
from kubedra.driver.registration import RegistrationStatus
from kubedra.driver.sockets import SocketPathError

__all__ = [
    "CDIError",
    "Claim",
    "ClaimError",
    "ClaimRef",
    "Device",
    "Driver",
    "PrepareResult",
    "RegistrationStatus",
    "SocketPathError",
    "dra_socket_path",
    "registration_socket_path",
]
