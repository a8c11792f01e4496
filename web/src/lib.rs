//! gpuctl-web: the browser calculator (skeleton)
