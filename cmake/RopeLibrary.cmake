# rope_add_library: an MLIR library of this project that states its layer,
# the libraries of ours it builds on and the MLIR components it uses.
#
#   rope_add_library(<name> LAYER <layer> [CONVERSION]
#     SOURCES <file>...
#     DEPENDS <tablegen target>...
#     ROPE <our library>...          checked against cmake/RopeLayering.cmake
#     MLIR <MLIR component>...       e.g. MLIRLinalgDialect
#     [PRECOMPILED GPU])             which precompiled MLIR headers it uses
#
# The MLIR components are stated (and checked to exist) but not linked one by
# one: everything links the one shared libMLIR.so (ROPE_MLIR_LIBS), which the
# stock mlir-opt also uses, so that the plugin shares its registries; Debian's
# component archives would give a second copy of each. The stated list is
# what a build against the component libraries would link (and is written to
# build/layering.json with the rest).

set(ROPE_LAYERS)
function(rope_layer layer)
  cmake_parse_arguments(ARG "" "" "USES" ${ARGN})
  foreach(used ${ARG_USES})
    if(NOT used IN_LIST ROPE_LAYERS)
      message(FATAL_ERROR "layering: layer ${layer} uses ${used}, which is "
                          "not declared before it")
    endif()
  endforeach()
  set(ROPE_LAYERS ${ROPE_LAYERS} ${layer} PARENT_SCOPE)
  set(ROPE_LAYER_USES_${layer} ${layer} ${ARG_USES} PARENT_SCOPE)
endfunction()
include(${CMAKE_CURRENT_LIST_DIR}/RopeLayering.cmake)

# Fails the configuration when `layer` may not use `used_layer`.
function(rope_check_layering name layer dep used_layer)
  if(NOT layer IN_LIST ROPE_LAYERS)
    message(FATAL_ERROR "layering: ${name} names an unknown layer '${layer}' "
                        "(cmake/RopeLayering.cmake knows: ${ROPE_LAYERS})")
  endif()
  if(NOT used_layer IN_LIST ROPE_LAYER_USES_${layer})
    message(FATAL_ERROR
      "layering: ${name} (layer ${layer}) may not depend on ${dep} (layer "
      "${used_layer}); ${layer} may use: ${ROPE_LAYER_USES_${layer}} "
      "(cmake/RopeLayering.cmake)")
  endif()
endfunction()

set_property(GLOBAL PROPERTY ROPE_LAYERING_ENTRIES "")

# Precompiled MLIR headers (ROPE_PRECOMPILED_HEADERS). Most of a translation
# unit's compile time here is clang parsing MLIR's dialect headers (the .inc
# files of their ops); every library compiles against one of two precompiled
# sets instead of parsing them per file: `CORE`, the headers nearly every
# library uses, and `GPU`, CORE plus the GPU, LLVM, NVVM and NVGPU dialects of
# the GPU codegen. Each set is built once (by a target of its own) and reused
# by the libraries (REUSE_FROM), so they share its compile flags. Only MLIR's
# and LLVM's headers go in: they do not change between builds, so editing our
# headers rebuilds no precompiled header.
set(ROPE_PCH_CORE
  <llvm/ADT/STLExtras.h> <llvm/ADT/SmallVector.h> <llvm/Support/raw_ostream.h>
  <mlir/IR/Builders.h> <mlir/IR/BuiltinOps.h> <mlir/IR/Matchers.h>
  <mlir/IR/PatternMatch.h> <mlir/Pass/Pass.h>
  <mlir/Transforms/GreedyPatternRewriteDriver.h>
  <mlir/Dialect/Affine/IR/AffineOps.h> <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Bufferization/IR/Bufferization.h>
  <mlir/Dialect/Func/IR/FuncOps.h> <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/Math/IR/Math.h> <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/SCF/IR/SCF.h> <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/Dialect/Vector/IR/VectorOps.h>)
set(ROPE_PCH_GPU ${ROPE_PCH_CORE}
  <mlir/Dialect/GPU/IR/GPUDialect.h> <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/LLVMIR/NVVMDialect.h> <mlir/Dialect/NVGPU/IR/NVGPUDialect.h>)

# The target that builds precompiled set `set` (CORE or GPU), made on first use.
function(rope_precompiled_headers_target set out)
  set(target RopePrecompiledHeaders${set})
  if(NOT TARGET ${target})
    add_library(${target} OBJECT
      ${PROJECT_SOURCE_DIR}/cmake/PrecompiledHeaders.cpp)
    llvm_update_compile_flags(${target})
    target_precompile_headers(${target} PRIVATE ${ROPE_PCH_${set}})
    # Without a timestamp in it, a precompiled header rebuilt with the same
    # content leaves ccache's results for the files using it valid.
    target_compile_options(${target} PRIVATE
      "SHELL:-Xclang -fno-pch-timestamp")
  endif()
  set(${out} ${target} PARENT_SCOPE)
endfunction()

function(rope_use_precompiled_headers target set)
  if(NOT ROPE_PRECOMPILED_HEADERS)
    return()
  endif()
  rope_precompiled_headers_target(${set} pch)
  target_precompile_headers(${target} REUSE_FROM ${pch})
endfunction()

function(rope_add_library name)
  cmake_parse_arguments(ARG "CONVERSION" "LAYER;PRECOMPILED"
                        "SOURCES;DEPENDS;ROPE;MLIR" ${ARGN})
  if(NOT ARG_PRECOMPILED)
    set(ARG_PRECOMPILED CORE)
  endif()
  if(NOT ARG_LAYER)
    message(FATAL_ERROR "rope_add_library(${name}): LAYER is required")
  endif()
  foreach(dep ${ARG_ROPE})
    if(NOT TARGET ${dep})
      message(FATAL_ERROR "layering: ${name} depends on ${dep}, which is not "
                          "defined yet (a lower layer is added first)")
    endif()
    get_target_property(dep_layer ${dep} ROPE_LAYER)
    rope_check_layering(${name} ${ARG_LAYER} ${dep} ${dep_layer})
  endforeach()
  foreach(component ${ARG_MLIR})
    if(NOT TARGET ${component})
      message(FATAL_ERROR "${name}: ${component} is not an MLIR component")
    endif()
  endforeach()
  set(kind add_mlir_library)
  if(ARG_CONVERSION)
    set(kind add_mlir_conversion_library)
  endif()
  cmake_language(CALL ${kind} ${name} ${ARG_SOURCES}
    DEPENDS ${ARG_DEPENDS}
    LINK_LIBS PUBLIC ${ARG_ROPE} ${ROPE_MLIR_LIBS})
  # add_mlir_library compiles through an object library obj.<name> when it
  # makes one.
  if(TARGET obj.${name})
    rope_use_precompiled_headers(obj.${name} ${ARG_PRECOMPILED})
  else()
    rope_use_precompiled_headers(${name} ${ARG_PRECOMPILED})
  endif()
  set_target_properties(${name} PROPERTIES
    ROPE_LAYER ${ARG_LAYER} ROPE_MLIR_COMPONENTS "${ARG_MLIR}")
  string(REPLACE ";" "\", \"" rope_json "${ARG_ROPE}")
  string(REPLACE ";" "\", \"" mlir_json "${ARG_MLIR}")
  if(rope_json)
    set(rope_json "\"${rope_json}\"")
  endif()
  if(mlir_json)
    set(mlir_json "\"${mlir_json}\"")
  endif()
  set_property(GLOBAL APPEND PROPERTY ROPE_LAYERING_ENTRIES
    "    \"${name}\": {\"layer\": \"${ARG_LAYER}\", \"rope\": [${rope_json}], \"mlir\": [${mlir_json}]}")
endfunction()

# build/layering.json: every library with its layer and dependencies.
function(rope_write_layering_manifest)
  get_property(entries GLOBAL PROPERTY ROPE_LAYERING_ENTRIES)
  string(REPLACE ";" ",\n" body "${entries}")
  file(WRITE ${CMAKE_BINARY_DIR}/layering.json "{\n${body}\n}\n")
endfunction()
