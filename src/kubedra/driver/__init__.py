"""SDK for writing DRA drivers in Python for the v1.30 kubelet (asyncio, ``grpc.aio``).

A driver supplies ``prepare``/``unprepare`` callbacks that receive typed :class:`Claim` objects
and publishes its named-resources instances with :meth:`Driver.publish`; the SDK serves plugin
registration and the DRA ``v1alpha3.Node`` API on unix sockets. See ``docs/driver-sdk.md``;
:mod:`kubedra.driver.testing` has a fake kubelet for tests.
"""

from kubedra.driver.cdi import CDIError
from kubedra.driver.claims import Claim, ClaimError
from kubedra.driver.plugin import Driver, dra_socket_path, registration_socket_path
from kubedra.driver.registration import RegistrationStatus
from kubedra.driver.sockets import SocketPathError

__all__ = [
    "CDIError",
    "Claim",
    "ClaimError",
    "Driver",
    "RegistrationStatus",
    "SocketPathError",
    "dra_socket_path",
    "registration_socket_path",
]
