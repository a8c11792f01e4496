//! gpuctl-alibaba (skeleton; see ARCHITECTURE.md)
