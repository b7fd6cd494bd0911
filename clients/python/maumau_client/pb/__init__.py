"""Generated protobuf and gRPC code for Mau Mau Arena (see maumau_client.generate)."""
