"""Clients of a registered driver's DRA gRPC service: one adapter per service, chosen once at
registration (upstream's ``chosenService``), behind the ledger's ``DriverClient``. ``channel``
holds what every adapter shares (the cached connection, readiness, grpc-go's error wording);
``devices`` the 1.34 services ``v1.DRAPlugin`` and ``v1beta1.DRAPlugin``, which take neutral
claim references. The 1.30 client (v1alpha3 with its v1alpha2 fallback) is
``registration.DraClient``.
"""
