#!/usr/bin/env bash
# Generates the Python protobuf and gRPC modules for proto/memory/v1 into examples/python/generated/.
# Either toolchain works; the generated code must match the protobuf runtime it runs with, which is
# why it is generated here, beside the runtime, rather than checked in.
#   Debian:  apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf
#   pip:     pip install grpcio grpcio-tools protobuf
set -euo pipefail
cd "$(dirname "$0")"
PROTO=../../proto
OUT=generated
rm -rf "$OUT" && mkdir -p "$OUT"
FILES=(memory/v1/types.proto memory/v1/memory_service.proto memory/v1/write_service.proto)
PYTHON=${PYTHON:-python3}
if command -v protoc >/dev/null && command -v grpc_python_plugin >/dev/null; then
  # Debian's protobuf-compiler (3.21) and protobuf-compiler-grpc. (Debian's python3-grpc-tools is 1.14,
  # too old for proto3 optional fields: use protoc instead.)
  protoc -I "$PROTO" --python_out="$OUT" --grpc_out="$OUT" --plugin=protoc-gen-grpc="$(command -v grpc_python_plugin)" "${FILES[@]}"
else
  "$PYTHON" -m grpc_tools.protoc -I "$PROTO" --python_out="$OUT" --grpc_python_out="$OUT" "${FILES[@]}"
fi
echo "generated $(find "$OUT" -name '*.py' | wc -l) modules in examples/python/$OUT" >&2
