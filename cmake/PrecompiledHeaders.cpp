// The one source of the targets that build the precompiled MLIR headers
// (cmake/RopeLibrary.cmake, rope_precompiled_headers_target): the headers
// themselves come in through CMake's generated cmake_pch.hxx.
