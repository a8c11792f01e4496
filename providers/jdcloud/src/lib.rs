//! gpuctl-jdcloud (skeleton; see ARCHITECTURE.md)
