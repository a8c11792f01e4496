//! gpuctl-tencent (skeleton; see ARCHITECTURE.md)
