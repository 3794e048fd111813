"""The generated protobuf and gRPC modules (recall_client/_gen, from proto/memory/v1), for raw calls.

    from recall_client.proto import types_pb2, write_service_pb2
"""

from recall_client._gen.memory.v1 import (
    inspect_service_pb2,
    inspect_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    types_pb2,
    write_service_pb2,
    write_service_pb2_grpc,
)

__all__ = [
    "inspect_service_pb2",
    "inspect_service_pb2_grpc",
    "memory_service_pb2",
    "memory_service_pb2_grpc",
    "types_pb2",
    "write_service_pb2",
    "write_service_pb2_grpc",
]
