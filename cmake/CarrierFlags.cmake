# Project-wide compile flags. Every error measurement relies on IEEE semantics: no FMA
# contraction, never -ffast-math, -Ofast or -march=native (Highway dispatches at run time).
add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>"
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wall>"
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wextra>"
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wpedantic>"
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wshadow>"
                    # g++ 12 warns falsely on std::string concatenation (GCC PR 105329).
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>")
# g++ 12 warns falsely inside its own avx512fintrin.h / avxintrin.h (`__m256i __Y = __Y;`, the
# header's idiom for an undefined vector) wherever our AVX-512 paths (precision/emulated.hpp,
# core/random_splits.hpp) are inlined: about 1,400 lines of -Wmaybe-uninitialized per full
# build, and at -O3 thirteen "'__Y' is used uninitialized" (-Wuninitialized, seen on a fresh
# bookworm), none about our code (GCC PR 105593, fixed in g++ 13). Switched off for g++ < 13
# only; clang-tidy and the clang fuzz build still check our own code for uninitialized reads.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>"
                      "$<$<COMPILE_LANGUAGE:CXX>:-Wno-uninitialized>")
endif()

if(CARRIER_SANITIZE)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${CARRIER_SANITIZE}>"
                      "$<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>"
                      "$<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>")
  add_link_options("-fsanitize=${CARRIER_SANITIZE}")
endif()
