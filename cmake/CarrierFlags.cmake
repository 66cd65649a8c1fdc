# Project-wide compile flags. Every error measurement relies on IEEE semantics: no FMA
# contraction, never -ffast-math, -Ofast or -march=native (Highway dispatches at run time).
add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>"
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wall>"
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wextra>"
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wpedantic>"
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wshadow>"
                    # g++ 12 warns falsely on std::string concatenation (GCC PR 105329).
                    "$<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>")

if(CARRIER_SANITIZE)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${CARRIER_SANITIZE}>"
                      "$<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>"
                      "$<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>")
  add_link_options("-fsanitize=${CARRIER_SANITIZE}")
endif()
