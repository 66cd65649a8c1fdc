# nlohmann-json and CLI11 (Debian nlohmann-json3-dev, libcli11-dev; header-only) are required:
# every JSON carrier writes or reads goes through nlohmann-json (core/tree_io.cpp,
# experiments/io/json.cpp) and every verb's command line through CLI11 (experiments/cli/args.cpp).
# Results: nlohmann_json::nlohmann_json, CLI11::CLI11.
find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  message(FATAL_ERROR "carrier needs nlohmann-json 3 (Debian package nlohmann-json3-dev: "
                      "sudo apt-get install nlohmann-json3-dev, or scripts/common.sh "
                      "carrier_install_deps); its CMake config nlohmann_json was not found")
endif()
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  message(FATAL_ERROR "carrier needs CLI11 (Debian package libcli11-dev: sudo apt-get install "
                      "libcli11-dev, or scripts/common.sh carrier_install_deps); its CMake "
                      "config CLI11 was not found")
endif()

# Third-party dependencies, each behind its CARRIER_WITH_* switch. Results:
# CARRIER_HAVE_MPFR (PkgConfig::MPFR, PkgConfig::GMP, Boost::headers), CARRIER_HAVE_HWY
# (hwy::hwy, hwy::hwy_contrib), CARRIER_HAVE_OPENMP (OpenMP::OpenMP_CXX), and Catch2.
find_package(PkgConfig QUIET)

function(_carrier_resolve opt found have_var what)
  _carrier_want(${opt} want)
  if(want STREQUAL "OFF")
    set(${have_var} OFF PARENT_SCOPE)
  elseif(${found})
    set(${have_var} ON PARENT_SCOPE)
  elseif(want STREQUAL "ON")
    message(FATAL_ERROR "${opt}=ON but ${what} was not found (scripts/common.sh carrier_install_deps installs it)")
  else()
    message(STATUS "carrier: ${what} not found; ${opt} resolves to OFF")
    set(${have_var} OFF PARENT_SCOPE)
  endif()
endfunction()

_carrier_want(CARRIER_WITH_MPFR _w)
set(_mpfr_found OFF)
if(NOT _w STREQUAL "OFF" AND PkgConfig_FOUND)
  pkg_check_modules(MPFR QUIET IMPORTED_TARGET mpfr)
  pkg_check_modules(GMP QUIET IMPORTED_TARGET gmp)
  find_package(Boost 1.74 QUIET)
  # README command (a)'s build (CARRIER_MAIN_JOB_ONLY) has no use for Boost's headers, and
  # scripts/run-main.sh does not install them (tens of seconds of apt on a bare machine).
  if(MPFR_FOUND AND GMP_FOUND AND (Boost_FOUND OR CARRIER_MAIN_JOB_ONLY))
    set(_mpfr_found ON)
  endif()
endif()
_carrier_resolve(CARRIER_WITH_MPFR _mpfr_found CARRIER_HAVE_MPFR "MPFR, GMP and Boost")

_carrier_want(CARRIER_WITH_HWY _w)
set(_hwy_found OFF)
if(NOT _w STREQUAL "OFF")
  find_package(hwy CONFIG QUIET)
  if(hwy_FOUND)
    set(_hwy_found ON)
  endif()
endif()
_carrier_resolve(CARRIER_WITH_HWY _hwy_found CARRIER_HAVE_HWY "Highway (libhwy-dev)")

_carrier_want(CARRIER_WITH_OPENMP _w)
set(_omp_found OFF)
if(NOT _w STREQUAL "OFF")
  find_package(OpenMP QUIET COMPONENTS CXX)
  if(OpenMP_CXX_FOUND)
    set(_omp_found ON)
  endif()
endif()
_carrier_resolve(CARRIER_WITH_OPENMP _omp_found CARRIER_HAVE_OPENMP "OpenMP")

# toml++ (Debian libtomlplusplus-dev, header-only): the parser of `carrier sweep` configs. It is
# required by the sweep alone, so it is looked for, not demanded: without it everything else
# builds (the core-only preset included) and `carrier sweep` refuses with one line.
# Result: CARRIER_HAVE_TOMLPP (the header's folder is a system include path on Debian, and is
# added to carrier_experiments' include path otherwise).
find_path(CARRIER_TOMLPP_INCLUDE_DIR toml++/toml.h)
if(CARRIER_TOMLPP_INCLUDE_DIR)
  set(CARRIER_HAVE_TOMLPP ON)
else()
  message(STATUS "carrier: toml++ (libtomlplusplus-dev) not found; `carrier sweep` will refuse")
  set(CARRIER_HAVE_TOMLPP OFF)
endif()

carrier_enable_cuda()
carrier_find_cuda_toolkit()  # CUDA::cudart_static for kernels/cuda and tests/ (CarrierCuda.cmake)

if(CARRIER_BUILD_TESTS)
  find_package(Catch2 2 CONFIG QUIET)
  if(NOT Catch2_FOUND)
    message(FATAL_ERROR "CARRIER_BUILD_TESTS=ON needs Catch2 v2 (Debian: catch2). "
                        "Install it or configure with -DCARRIER_BUILD_TESTS=OFF")
  endif()
  include(Catch)
endif()
