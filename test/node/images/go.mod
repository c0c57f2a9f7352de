// Test images for the real node: a quit-endpoint server and the OCI layout writer. Standard library only.
module podlife.dev/test/node/images

go 1.25.0
