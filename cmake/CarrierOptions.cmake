# Feature switches. AUTO uses a dependency when it is found; ON requires it; OFF ignores it.
# With every CARRIER_WITH_* OFF, core/ and its tests build with a compiler, CMake and Catch2.
set(_carrier_switches CARRIER_WITH_MPFR CARRIER_WITH_HWY CARRIER_WITH_OPENMP CARRIER_WITH_CUDA)
foreach(_opt IN LISTS _carrier_switches)
  set(${_opt} AUTO CACHE STRING "Use this dependency: AUTO, ON or OFF")
  set_property(CACHE ${_opt} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${_opt}}" _val)
  if(NOT _val MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|YES|NO|1|0)$")
    message(FATAL_ERROR "${_opt}=${${_opt}}: expected AUTO, ON or OFF")
  endif()
endforeach()

option(CARRIER_BUILD_TESTS "Build the Catch2 test suite (needs Catch2 v2)" ON)
set(CARRIER_SANITIZE "" CACHE STRING "Sanitizers to build with, e.g. address,undefined")

# _carrier_want(<option> <out>): out = AUTO, ON or OFF, normalised.
function(_carrier_want opt out)
  string(TOUPPER "${${opt}}" v)
  if(v MATCHES "^(ON|TRUE|YES|1)$")
    set(${out} ON PARENT_SCOPE)
  elseif(v MATCHES "^(OFF|FALSE|NO|0)$")
    set(${out} OFF PARENT_SCOPE)
  else()
    set(${out} AUTO PARENT_SCOPE)
  endif()
endfunction()

# The main job's build (scripts/run-main.sh on a fresh build folder): `carrier` with the verbs
# the default study runs (sweep, merge, eval, tree) and not the others (laws, derive, study,
# bench, demo, reference-bench: more than a third of its compile time), which then refuse with
# one line saying how to build them.
option(CARRIER_MAIN_JOB_ONLY "Build only the verbs README command (a) runs" OFF)
