"""Generated protobuf and gRPC modules for the kubelet DRA and registration APIs."""
