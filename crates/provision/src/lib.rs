//! gpuctl-provision (skeleton; see ARCHITECTURE.md)
