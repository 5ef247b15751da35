# cuDNN is optional. The cudnn backend needs cuDNN 9's headers at build time only: the library
# is loaded at run time (src/backends/cudnn/cudnn_library.cpp), so the tool starts where it is missing.
# Without the headers the backend is listed as not built.
set(SDPA_HAVE_CUDNN OFF)
if(SDPA_WITH_CUDNN)
  find_path(CUDNN_INCLUDE_DIR cudnn_graph.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include/x86_64-linux-gnu)
  if(CUDNN_INCLUDE_DIR)
    set(SDPA_HAVE_CUDNN ON)
    add_library(sdpa_cudnn INTERFACE)
    target_include_directories(sdpa_cudnn INTERFACE ${CUDNN_INCLUDE_DIR})
    target_compile_definitions(sdpa_cudnn INTERFACE SDPA_HAVE_CUDNN)
    message(STATUS "cuDNN headers: ${CUDNN_INCLUDE_DIR} (libcudnn.so.9 is loaded at run time)")
  else()
    message(STATUS "cuDNN: cudnn_graph.h not found; the cudnn backend will be listed as not built")
  endif()
endif()
