cmake_minimum_required(VERSION 3.20)
# CMake refuses a library dependency the layer table does not allow (what
# rope_add_library checks for each ROPE dependency at configure time).
include(${ROPE_SOURCE_DIR}/cmake/RopeLibrary.cmake)
rope_check_layering(MLIRRopeRaising Raising MLIRRopeFusion Fusion)
