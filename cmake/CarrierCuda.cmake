# Locate nvcc before project(): CMake 3.25 only looks on PATH, and in CI /usr/local/cuda/bin is
# not on PATH. Architectures default to 80;90 (native fails without a GPU, < 75 fails with
# nvcc 13). CARRIER_HAVE_CUDA is set here and the CUDA language enabled after project().
_carrier_want(CARRIER_WITH_CUDA _want_cuda)
set(CARRIER_HAVE_CUDA OFF)
if(NOT _want_cuda STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(CARRIER_NVCC nvcc PATHS /usr/local/cuda/bin NO_CACHE)
    if(CARRIER_NVCC)
      set(CMAKE_CUDA_COMPILER "${CARRIER_NVCC}" CACHE FILEPATH "CUDA compiler")
    endif()
  endif()
  if(CMAKE_CUDA_COMPILER OR DEFINED ENV{CUDACXX})
    set(CARRIER_HAVE_CUDA ON)
  elseif(_want_cuda STREQUAL "ON")
    message(FATAL_ERROR "CARRIER_WITH_CUDA=ON but nvcc was found neither on PATH nor in /usr/local/cuda/bin")
  endif()
endif()
if(CARRIER_HAVE_CUDA AND NOT CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures")
endif()

macro(carrier_enable_cuda)
  if(CARRIER_HAVE_CUDA)
    enable_language(CUDA)
    # CMake 3.25 knows no C++20 dialect for nvcc: teach it the flag, so targets that inherit
    # C++20 from CMAKE_CXX_STANDARD get -std=c++20 under nvcc too.
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    # --fmad=false: no contraction on the device either, so device bits equal the replay's.
    set(CARRIER_CUDA_FLAGS --expt-relaxed-constexpr --fmad=false)
  endif()
endmacro()
