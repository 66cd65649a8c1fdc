# Locate nvcc before project(): CMake 3.25 only looks on PATH, and in CI /usr/local/cuda/bin is
# not on PATH. Architectures default to 80;90 (native fails without a GPU, < 75 fails with
# nvcc 13). CARRIER_HAVE_CUDA is set here and the CUDA language enabled after project().
_carrier_want(CARRIER_WITH_CUDA _want_cuda)
set(CARRIER_HAVE_CUDA OFF)
if(NOT _want_cuda STREQUAL "OFF")
  set(_carrier_nvcc "${CMAKE_CUDA_COMPILER}")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(CARRIER_NVCC nvcc PATHS /usr/local/cuda/bin NO_CACHE)
    if(CARRIER_NVCC)
      set(_carrier_nvcc "${CARRIER_NVCC}")
    endif()
  endif()
  # AUTO builds the CUDA kernels only where a GPU can run them (a driver is loaded): nvcc alone,
  # as on a CI runner or a workstation without its card, would cost minutes of nvcc compiling
  # objects nothing runs. ON builds them wherever nvcc is (README command (b) passes ON).
  set(_carrier_gpu_present OFF)
  if(EXISTS /proc/driver/nvidia/version OR EXISTS /dev/nvidiactl)
    set(_carrier_gpu_present ON)
  endif()
  if((_carrier_nvcc OR DEFINED ENV{CUDACXX}) AND
     (_want_cuda STREQUAL "ON" OR _carrier_gpu_present))
    set(CARRIER_HAVE_CUDA ON)
    if(_carrier_nvcc AND NOT CMAKE_CUDA_COMPILER)
      set(CMAKE_CUDA_COMPILER "${_carrier_nvcc}" CACHE FILEPATH "CUDA compiler")
    endif()
  elseif(_carrier_nvcc OR DEFINED ENV{CUDACXX})
    message(STATUS "carrier: nvcc found but no GPU driver; CARRIER_WITH_CUDA=AUTO resolves to "
                   "OFF (-DCARRIER_WITH_CUDA=ON builds the CUDA kernels anyway)")
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

# carrier_find_cuda_toolkit(): find_package(CUDAToolkit) once, at the top level, so CUDA::* and
# CUDAToolkit_* are visible in every directory (kernels/cuda, tests/). Stock CMake 3.25's
# FindCUDAToolkit sets a DEPRECATION property on CUDA::nvToolsExt without checking that the
# target exists, and CUDA 12.9+/13 ship no libnvToolsExt (nvtx3 is header-only): configure then
# fails with "set_property could not find TARGET CUDA::nvToolsExt" (fixed upstream in 3.27 by a
# TARGET guard). Where the toolkit has no such library, an empty INTERFACE target of that name
# stands in, so the property lands on it; nothing in carrier links nvToolsExt.
macro(carrier_find_cuda_toolkit)
  if(CARRIER_HAVE_CUDA AND NOT TARGET CUDA::cudart_static)
    get_filename_component(_carrier_cuda_bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
    find_library(_carrier_nvtoolsext NAMES nvToolsExt
                 HINTS "${_carrier_cuda_bin}/../lib64" "${_carrier_cuda_bin}/../lib"
                       "${_carrier_cuda_bin}/../targets/x86_64-linux/lib"
                 NO_DEFAULT_PATH NO_CACHE)
    if(NOT _carrier_nvtoolsext AND NOT TARGET CUDA::nvToolsExt)
      add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
    endif()
    find_package(CUDAToolkit REQUIRED)
  endif()
endmacro()
