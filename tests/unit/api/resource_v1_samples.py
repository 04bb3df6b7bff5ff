"""Manifests of the resource.k8s.io devices model, shaped like the examples of the Kubernetes
DRA documentation, with every field of the v1 types set somewhere; and their v1beta1 forms."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec

V1 = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: example-device-class
spec:
  selectors:
  - cel:
      expression: |-
        device.driver == "driver.example.com"
  config:
  - opaque:
      driver: driver.example.com
      parameters:
        apiVersion: gpu.example.com/v1
        kind: GpuConfig
        sharing: {strategy: TimeSlicing}
  extendedResourceName: example.com/gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: example-resource-claim-template
  namespace: default
spec:
  metadata:
    labels: {app: inference}
  spec:
    devices:
      requests:
      - name: gpu-claim
        exactly:
          deviceClassName: example-device-class
          selectors:
          - cel:
              expression: |-
                device.attributes["driver.example.com"].type == "gpu" &&
                device.capacity["driver.example.com"].memory == quantity("64Gi")
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: example-resource-claim
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: example-device-class
        selectors:
        - cel: {expression: 'device.attributes["driver.example.com"].model == "a100"'}
        allocationMode: ExactCount
        count: 2
        adminAccess: false
        tolerations:
        - {key: example.com/unhealthy, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
        capacity:
          requests: {memory: 10Gi}
    - name: nic
      firstAvailable:
      - name: fast
        deviceClassName: fast-nic
        selectors:
        - cel: {expression: 'device.attributes["net.example.com"].speed >= 100'}
        allocationMode: ExactCount
        count: 1
        tolerations:
        - {key: maintenance, operator: Equal, value: planned, effect: NoSchedule}
        capacity:
          requests: {bandwidth: 10G}
      - name: any
        deviceClassName: nic
        allocationMode: All
    constraints:
    - requests: [gpu, nic/fast]
      matchAttribute: driver.example.com/numa
    - requests: [gpu]
      distinctAttribute: driver.example.com/pcieRoot
    config:
    - requests: [gpu]
      opaque:
        driver: driver.example.com
        parameters: {apiVersion: gpu.example.com/v1, kind: GpuConfig, mode: exclusive}
status:
  allocation:
    devices:
      results:
      - request: gpu
        driver: driver.example.com
        pool: worker-1
        device: gpu-0
        adminAccess: false
        tolerations:
        - {key: example.com/unhealthy, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
        bindingConditions: [dra.example.com/attached]
        bindingFailureConditions: [dra.example.com/failed]
        shareID: 9a1b2c3d-0000-4000-8000-000000000001
        consumedCapacity: {memory: 10Gi}
      - {request: nic/fast, driver: net.example.com, pool: worker-1, device: eth1}
      config:
      - source: FromClass
        requests: [gpu]
        opaque:
          driver: driver.example.com
          parameters:
            apiVersion: gpu.example.com/v1
            kind: GpuConfig
            sharing: {strategy: TimeSlicing}
      - source: FromClaim
        requests: [gpu]
        opaque:
          driver: driver.example.com
          parameters: {apiVersion: gpu.example.com/v1, kind: GpuConfig, mode: exclusive}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [worker-1]}
    allocationTimestamp: "2025-08-27T10:00:00Z"
  reservedFor:
  - {resource: pods, name: inference-0, uid: 5f0c2b9e-1111-4222-8333-444455556666}
  devices:
  - driver: net.example.com
    pool: worker-1
    device: eth1
    shareID: 9a1b2c3d-0000-4000-8000-000000000002
    conditions:
    - type: Ready
      status: "True"
      observedGeneration: 1
      lastTransitionTime: "2025-08-27T10:00:05Z"
      reason: Configured
      message: interface is up
    data: {vlan: 7}
    networkData:
      interfaceName: net1
      ips: [10.9.8.7/24, "2001:db8::1/64"]
      hardwareAddress: ea:9f:cb:40:b1:7b
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: worker-1-driver.example.com-x7kq2
spec:
  driver: driver.example.com
  pool:
    name: worker-1
    generation: 0
    resourceSliceCount: 1
  nodeName: worker-1
  devices:
  - name: gpu-0
    attributes:
      type: {string: gpu}
      index: {int: 0}
      healthy: {bool: true}
      driverVersion: {version: 1.2.3}
      dra.example.com/numa: {int: 1}
    capacity:
      memory: {value: 80Gi}
      cores:
        value: "128"
        requestPolicy:
          default: "8"
          validValues: ["8", "16", "128"]
      bandwidth:
        value: 100G
        requestPolicy:
          default: 10G
          validRange: {min: 1G, max: 100G, step: 1G}
    consumesCounters:
    - counterSet: gpu-0-counters
      counters:
        memory: {value: 80Gi}
    taints:
    - key: example.com/unhealthy
      value: ecc
      effect: NoSchedule
      timeAdded: "2025-08-27T09:00:00Z"
    bindsToNode: true
    bindingConditions: [dra.example.com/attached]
    bindingFailureConditions: [dra.example.com/failed]
    allowMultipleAllocations: true
  sharedCounters:
  - name: gpu-0-counters
    counters:
      memory: {value: 80Gi}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: fabric
spec:
  driver: fabric.example.com
  pool: {name: rack-1, generation: 3, resourceSliceCount: 2}
  perDeviceNodeSelection: true
  devices:
  - name: link-0
    nodeName: worker-1
  - name: link-1
    nodeSelector:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: rack, operator: In, values: [rack-1]}
  - name: link-2
    allNodes: true
"""

V1BETA1 = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata:
  name: example-resource-claim
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: example-device-class
      selectors:
      - cel: {expression: 'device.attributes["driver.example.com"].model == "a100"'}
      allocationMode: ExactCount
      count: 2
      adminAccess: true
      tolerations:
      - {key: example.com/unhealthy, operator: Exists, effect: NoExecute}
      capacity:
        requests: {memory: 10Gi}
    - name: nic
      deviceClassName: ""
      firstAvailable:
      - {name: fast, deviceClassName: fast-nic, allocationMode: ExactCount, count: 1}
      - {name: any, deviceClassName: nic, allocationMode: All}
    constraints:
    - {requests: [gpu, nic/fast], matchAttribute: driver.example.com/numa}
    config:
    - requests: [gpu]
      opaque: {driver: driver.example.com, parameters: {mode: exclusive}}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: driver.example.com, pool: worker-1, device: gpu-0}
  reservedFor:
  - {resource: pods, name: inference-0, uid: 5f0c2b9e-1111-4222-8333-444455556666}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: worker-1-driver.example.com-x7kq2
spec:
  driver: driver.example.com
  pool: {name: worker-1, generation: 0, resourceSliceCount: 1}
  nodeName: worker-1
  devices:
  - name: gpu-0
    basic:
      attributes:
        type: {string: gpu}
        driverVersion: {version: 1.2.3}
      capacity:
        memory: {value: 80Gi}
      taints:
      - {key: example.com/unhealthy, effect: NoSchedule, timeAdded: "2025-08-27T09:00:00Z"}
  - name: gpu-1
    basic: {}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  name: example-resource-claim-template
  namespace: default
spec:
  spec:
    devices:
      requests:
      - name: gpu-claim
        deviceClassName: example-device-class
        allocationMode: ExactCount
        count: 1
"""


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in codec.load_documents(text) if d]


def by_kind(text: str, kind: str) -> dict[str, Any]:
    return next(d for d in documents(text) if d["kind"] == kind)
