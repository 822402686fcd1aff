# rope_add_library: an MLIR library of this project that states its layer,
# the libraries of ours it builds on and the MLIR components it uses.
#
#   rope_add_library(<name> LAYER <layer> [CONVERSION]
#     SOURCES <file>...
#     DEPENDS <tablegen target>...
#     ROPE <our library>...          checked against cmake/RopeLayering.cmake
#     MLIR <MLIR component>...)      e.g. MLIRLinalgDialect
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

function(rope_add_library name)
  cmake_parse_arguments(ARG "CONVERSION" "LAYER"
                        "SOURCES;DEPENDS;ROPE;MLIR" ${ARGN})
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
