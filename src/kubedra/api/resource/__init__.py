"""The ``resource.k8s.io`` group: one module per version (``v1alpha2`` of Kubernetes 1.30,
the devices model of 1.34 in ``v1``/``v1beta1``) and the conversions between the versions
that share a stored form (``convert``)."""
