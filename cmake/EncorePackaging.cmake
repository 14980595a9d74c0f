# Install rules, CMake config package and pkg-config files.
#
# Modelled on google/benchmark: an exported targets file (namespace encore::), a config file
# generated with configure_package_config_file() and a version file from
# write_basic_package_version_file(). After installation
#
#   find_package(Encore REQUIRED)        -> encore::time, encore::dump, encore::dump_static,
#                                           encore::replay (whichever were built), encore::encore
#   pkg-config encore-time / encore-dump / encore-replay
#
# Installs whichever of the library targets exist at the end of the top-level CMakeLists.txt,
# so it is included last. Nothing here changes how the build tree builds, except that purely
# build-time helper targets (ENCORE_BUILD_ONLY_TARGETS, e.g. encore_warnings) are wrapped in
# $<BUILD_INTERFACE:...> in the link interface of exported targets so they are not exported.

include(CMakePackageConfigHelpers)

set(ENCORE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Encore"
    CACHE STRING "Install directory of EncoreConfig.cmake, relative to the prefix")
set(ENCORE_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Install directory of the encore-*.pc files, relative to the prefix")
mark_as_advanced(ENCORE_INSTALL_CMAKEDIR ENCORE_INSTALL_PKGCONFIGDIR)

# Library targets that make up the package: target -> pkg-config module name.
set(_encore_lib_targets encore_time encore_dump encore_dump_static encore_replay)
set(_encore_pc_of_encore_time encore-time)
set(_encore_pc_of_encore_dump encore-dump)
set(_encore_pc_of_encore_dump_static encore-dump)
set(_encore_pc_of_encore_replay encore-replay)
# Link dependencies that only matter while building Encore itself (warning flags...).
set(ENCORE_BUILD_ONLY_TARGETS encore_warnings)

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

# Target names referenced by a link item, generator expressions stripped:
# "$<LINK_ONLY:PkgConfig::ZSTD>" -> PkgConfig::ZSTD. Non-target items are dropped.
function(_encore_link_item_targets item out_var)
  string(REGEX REPLACE "\\$<[A-Za-z_]+:" "" stripped "${item}")
  string(REPLACE ">" "" stripped "${stripped}")
  string(REPLACE "," ";" stripped "${stripped}")
  set(result "")
  foreach(name IN LISTS stripped)
    if(name AND TARGET "${name}")
      list(APPEND result "${name}")
    endif()
  endforeach()
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

# Resolves an ALIAS target to the real one.
function(_encore_real_target name out_var)
  get_target_property(aliased "${name}" ALIASED_TARGET)
  if(aliased)
    set(${out_var} "${aliased}" PARENT_SCOPE)
  else()
    set(${out_var} "${name}" PARENT_SCOPE)
  endif()
endfunction()

# ---------------------------------------------------------------------------------------------
# Which targets are exported
# ---------------------------------------------------------------------------------------------

set(ENCORE_EXPORTED_TARGETS "")
foreach(_t IN LISTS _encore_lib_targets)
  if(TARGET ${_t})
    list(APPEND ENCORE_EXPORTED_TARGETS ${_t})
  endif()
endforeach()

# Strip build-only helpers from the exported link interfaces. A static library links its
# PRIVATE dependencies as $<LINK_ONLY:dep>, which install(EXPORT) would otherwise require to be
# part of an export set.
foreach(_t IN LISTS ENCORE_EXPORTED_TARGETS)
  get_target_property(_ill ${_t} INTERFACE_LINK_LIBRARIES)
  if(NOT _ill)
    continue()
  endif()
  set(_new "")
  foreach(_item IN LISTS _ill)
    foreach(_helper IN LISTS ENCORE_BUILD_ONLY_TARGETS)
      if(_item STREQUAL _helper)
        set(_item "$<BUILD_INTERFACE:${_helper}>")
      elseif(_item STREQUAL "$<LINK_ONLY:${_helper}>")
        set(_item "$<LINK_ONLY:$<BUILD_INTERFACE:${_helper}>>")
      endif()
    endforeach()
    list(APPEND _new "${_item}")
  endforeach()
  set_property(TARGET ${_t} PROPERTY INTERFACE_LINK_LIBRARIES "${_new}")
endforeach()

# Walk the exported link interfaces: other in-project (non-imported) targets they reference
# must be exported too; imported targets must be re-created by EncoreConfig.cmake.
set(_encore_imported_deps "")
set(_encore_worklist ${ENCORE_EXPORTED_TARGETS})
while(_encore_worklist)
  list(POP_FRONT _encore_worklist _t)
  get_target_property(_ill ${_t} INTERFACE_LINK_LIBRARIES)
  if(NOT _ill)
    continue()
  endif()
  foreach(_item IN LISTS _ill)
    if(_item MATCHES "BUILD_INTERFACE:" AND NOT _item MATCHES "INSTALL_INTERFACE:")
      continue()
    endif()
    _encore_link_item_targets("${_item}" _names)
    foreach(_name IN LISTS _names)
      _encore_real_target(${_name} _real)
      get_target_property(_imported ${_real} IMPORTED)
      if(_imported)
        list(APPEND _encore_imported_deps ${_name})
      elseif(NOT _real IN_LIST ENCORE_EXPORTED_TARGETS AND NOT _real IN_LIST ENCORE_BUILD_ONLY_TARGETS)
        message(STATUS "Encore packaging: also exporting ${_real} (linked by ${_t})")
        list(APPEND ENCORE_EXPORTED_TARGETS ${_real})
        list(APPEND _encore_worklist ${_real})
      endif()
    endforeach()
  endforeach()
endwhile()
list(REMOVE_DUPLICATES _encore_imported_deps)

# ---------------------------------------------------------------------------------------------
# Install rules
# ---------------------------------------------------------------------------------------------

if(ENCORE_EXPORTED_TARGETS)
  install(TARGETS ${ENCORE_EXPORTED_TARGETS}
    EXPORT EncoreTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime
            NAMELINK_COMPONENT Development
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

# The command-line tool. Exported too (encore::encore) so consumers can run it from CMake.
if(TARGET encore)
  install(TARGETS encore EXPORT EncoreTargets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)
  set(_encore_has_tool TRUE)
else()
  set(_encore_has_tool FALSE)
endif()

# Public headers: <lib>/include/encore/ -> <prefix>/include/encore/.
foreach(_lib IN ITEMS libtime libdump libreplay)
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${_lib}/include/encore)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_lib}/include/encore
      DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development
      FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "*.inc" PATTERN "*.def")
  endif()
endforeach()

# Generated headers (the MPI function table). ENCORE_GENERATED_INCLUDE_DIR is set by
# libtime/gen in libtime's scope; fetch it from there when it is not visible here.
if(NOT ENCORE_GENERATED_INCLUDE_DIR AND IS_DIRECTORY ${PROJECT_SOURCE_DIR}/libtime)
  get_directory_property(ENCORE_GENERATED_INCLUDE_DIR
    DIRECTORY ${PROJECT_SOURCE_DIR}/libtime DEFINITION ENCORE_GENERATED_INCLUDE_DIR)
endif()
if(ENCORE_GENERATED_INCLUDE_DIR)
  # Trailing slash: install the directory's contents (e.g. encore/mpi_table.h) into include/.
  install(DIRECTORY ${ENCORE_GENERATED_INCLUDE_DIR}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development OPTIONAL
    FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "*.inc" PATTERN "*.def")
endif()

# ---------------------------------------------------------------------------------------------
# CMake package: EncoreConfig.cmake, EncoreConfigVersion.cmake, EncoreTargets.cmake
# ---------------------------------------------------------------------------------------------

# Build the dependency-finding block of EncoreConfig.cmake from the imported targets that the
# exported link interfaces reference (PkgConfig::X -> pkg_check_modules(X ... libx), ns::t ->
# find_dependency(ns)).
set(_encore_dep_lines "")
set(_encore_need_pkgconfig FALSE)
set(_encore_mpi_components "")
set(_encore_find_packages "")
foreach(_dep IN LISTS _encore_imported_deps)
  if(_dep MATCHES "^PkgConfig::(.+)$")
    set(_prefix "${CMAKE_MATCH_1}")
    set(_module "${${_prefix}_MODULE_NAME}")
    if(NOT _module)
      message(WARNING "Encore packaging: no pkg-config module known for ${_dep}; "
                      "EncoreConfig.cmake will not re-create it")
      continue()
    endif()
    set(_encore_need_pkgconfig TRUE)
    string(APPEND _encore_dep_lines
      "if(NOT TARGET ${_dep})\n"
      "  pkg_check_modules(${_prefix} QUIET IMPORTED_TARGET ${_module})\n"
      "  if(NOT ${_prefix}_FOUND)\n"
      "    set(Encore_FOUND FALSE)\n"
      "    set(Encore_NOT_FOUND_MESSAGE \"Encore requires the pkg-config module ${_module}\")\n"
      "    return()\n"
      "  endif()\n"
      "endif()\n")
  elseif(_dep MATCHES "^MPI::MPI_(C|CXX|Fortran)$")
    list(APPEND _encore_mpi_components ${CMAKE_MATCH_1})
  elseif(_dep MATCHES "^Threads::")
    list(APPEND _encore_find_packages "Threads")
  elseif(_dep MATCHES "^nlohmann_json::")
    list(APPEND _encore_find_packages "nlohmann_json 3.10")
  elseif(_dep MATCHES "^fmt::")
    list(APPEND _encore_find_packages "fmt 9")
  elseif(_dep MATCHES "^([A-Za-z0-9_]+)::")
    list(APPEND _encore_find_packages "${CMAKE_MATCH_1}")
  else()
    message(WARNING "Encore packaging: do not know how consumers find ${_dep}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _encore_find_packages)
list(REMOVE_DUPLICATES _encore_mpi_components)

set(ENCORE_CONFIG_DEPENDENCIES "")
foreach(_pkg IN LISTS _encore_find_packages)
  string(APPEND ENCORE_CONFIG_DEPENDENCIES "find_dependency(${_pkg})\n")
endforeach()
if(_encore_mpi_components)
  list(JOIN _encore_mpi_components " " _langs)
  string(APPEND ENCORE_CONFIG_DEPENDENCIES
    "# FindMPI only finds components for enabled languages.\n"
    "foreach(_encore_lang IN ITEMS ${_langs})\n"
    "  if(NOT CMAKE_\${_encore_lang}_COMPILER_LOADED)\n"
    "    enable_language(\${_encore_lang})\n"
    "  endif()\n"
    "endforeach()\n"
    "find_dependency(MPI COMPONENTS ${_langs})\n")
endif()
if(_encore_need_pkgconfig)
  string(APPEND ENCORE_CONFIG_DEPENDENCIES "find_dependency(PkgConfig)\n" "${_encore_dep_lines}")
endif()

set(ENCORE_CONFIG_COMPONENTS "")
foreach(_t IN LISTS ENCORE_EXPORTED_TARGETS)
  get_target_property(_export_name ${_t} EXPORT_NAME)
  if(NOT _export_name)
    set(_export_name ${_t})
  endif()
  list(APPEND ENCORE_CONFIG_COMPONENTS ${_export_name})
endforeach()
if(_encore_has_tool)
  list(APPEND ENCORE_CONFIG_COMPONENTS encore)
endif()

if(ENCORE_EXPORTED_TARGETS OR _encore_has_tool)
  install(EXPORT EncoreTargets
    NAMESPACE encore::
    DESTINATION ${ENCORE_INSTALL_CMAKEDIR}
    COMPONENT Development)
  # No build-tree export(): it would keep $<BUILD_INTERFACE:encore_warnings> and then require
  # the build-only helpers to be exported as well. Consumers use an install prefix.
endif()

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/EncoreConfig.cmake.in
  ${PROJECT_BINARY_DIR}/EncoreConfig.cmake
  INSTALL_DESTINATION ${ENCORE_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/EncoreConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/EncoreConfig.cmake
  ${PROJECT_BINARY_DIR}/EncoreConfigVersion.cmake
  DESTINATION ${ENCORE_INSTALL_CMAKEDIR}
  COMPONENT Development)

# ---------------------------------------------------------------------------------------------
# pkg-config files
# ---------------------------------------------------------------------------------------------

# The .pc files name the install prefix in absolute form, filled in at install time: the prefix
# given to `cmake --install <build> --prefix DIR` wins over the configure-time
# CMAKE_INSTALL_PREFIX (DESTDIR staging works too: file(INSTALL) prepends it).
set(ENCORE_PC_PREFIX "@ENCORE_PC_INSTALL_PREFIX@")
foreach(_v IN ITEMS LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_v}}")
    set(ENCORE_PC_${_v} "${CMAKE_INSTALL_${_v}}")
  else()
    set(ENCORE_PC_${_v} "\${prefix}/${CMAKE_INSTALL_${_v}}")
  endif()
endforeach()

# pkg-config module (or raw linker flags) for one link item; empty when it is build-only.
function(_encore_pc_for_item item out_module out_flags)
  set(module "")
  set(flags "")
  if(item MATCHES "^\\$<BUILD_INTERFACE:" OR item MATCHES "BUILD_INTERFACE:")
    # build tree only
  elseif(item MATCHES "^\\$<LINK_ONLY:(.*)>$")
    _encore_pc_for_item("${CMAKE_MATCH_1}" module flags)
  elseif(item MATCHES "^\\$<")
    # other generator expressions: not representable in a .pc file
  elseif(TARGET "${item}")
    _encore_real_target("${item}" real)
    get_target_property(real_type "${real}" TYPE)
    get_target_property(real_imported "${real}" IMPORTED)
    if(real IN_LIST ENCORE_BUILD_ONLY_TARGETS)
    elseif(real_type STREQUAL "STATIC_LIBRARY" AND NOT real_imported
           AND NOT real IN_LIST ENCORE_EXPORTED_TARGETS)
      # an internal static library: its objects are inside the library that links it
    elseif(DEFINED _encore_pc_of_${real})
      set(module "${_encore_pc_of_${real}}")
    elseif(item MATCHES "^PkgConfig::(.+)$")
      set(module "${${CMAKE_MATCH_1}_MODULE_NAME}")
    elseif(item MATCHES "^MPI::")
      set(module mpich)
    elseif(item MATCHES "^Threads::")
      set(flags "-pthread")
    elseif(item MATCHES "^nlohmann_json::")
      set(module nlohmann_json)
    elseif(item MATCHES "^fmt::")
      set(module fmt)
    elseif(item MATCHES "^CLI11::")
      set(module CLI11)
    else()
      message(WARNING "Encore packaging: no pkg-config equivalent for ${item}")
    endif()
  elseif(item MATCHES "^-")
    set(flags "${item}")
  elseif(item MATCHES "/lib([^/]+)\\.(a|so)")
    set(flags "-l${CMAKE_MATCH_1}")
  elseif(item)
    set(flags "-l${item}")
  endif()
  set(${out_module} "${module}" PARENT_SCOPE)
  set(${out_flags} "${flags}" PARENT_SCOPE)
endfunction()

# Fills ENCORE_PC_REQUIRES / _REQUIRES_PRIVATE / _LIBS / _LIBS_PRIVATE for `target` and
# configures cmake/<pc_name>.pc.in. A static-only library lists all its dependencies as public
# (`pkg-config --libs` must be enough to link it); a shared one keeps its private deps private.
function(_encore_write_pc target pc_name)
  get_target_property(type ${target} TYPE)
  get_target_property(output_name ${target} OUTPUT_NAME)
  if(NOT output_name)
    set(output_name ${target})
  endif()
  get_target_property(iface ${target} INTERFACE_LINK_LIBRARIES)
  get_target_property(all ${target} LINK_LIBRARIES)
  if(NOT iface)
    set(iface "")
  endif()
  if(NOT all)
    set(all "")
  endif()
  set(req "")
  set(req_priv "")
  set(libs "")
  set(libs_priv "")
  foreach(item IN LISTS iface)
    _encore_pc_for_item("${item}" module flags)
    if(item MATCHES "^\\$<LINK_ONLY:" AND NOT type STREQUAL "STATIC_LIBRARY")
      list(APPEND req_priv ${module})
      list(APPEND libs_priv ${flags})
    else()
      list(APPEND req ${module})
      list(APPEND libs ${flags})
    endif()
  endforeach()
  if(NOT type STREQUAL "STATIC_LIBRARY")
    foreach(item IN LISTS all)
      _encore_pc_for_item("${item}" module flags)
      if(module AND NOT module IN_LIST req)
        list(APPEND req_priv ${module})
      endif()
      list(APPEND libs_priv ${flags})
    endforeach()
  endif()
  # The library's own pkg-config name never requires itself.
  list(REMOVE_ITEM req ${pc_name})
  list(REMOVE_ITEM req_priv ${pc_name})
  foreach(v IN ITEMS req req_priv libs libs_priv)
    list(REMOVE_DUPLICATES ${v})
  endforeach()
  list(JOIN req ", " ENCORE_PC_REQUIRES)
  list(JOIN req_priv ", " ENCORE_PC_REQUIRES_PRIVATE)
  list(JOIN libs " " ENCORE_PC_LIBS)
  list(JOIN libs_priv " " ENCORE_PC_LIBS_PRIVATE)
  set(ENCORE_PC_LIBNAME "${output_name}")
  # Two stages: configure now (everything but the prefix), substitute the prefix at install.
  set(stage ${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc.stage)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc_name}.pc.in ${stage} @ONLY)
  set(dest "${ENCORE_INSTALL_PKGCONFIGDIR}")
  if(NOT IS_ABSOLUTE "${dest}")
    set(dest "\${CMAKE_INSTALL_PREFIX}/${dest}")
  endif()
  install(CODE "
    set(ENCORE_PC_INSTALL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    configure_file(\"${stage}\" \"${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc\" @ONLY)
    file(INSTALL \"${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc\" DESTINATION \"${dest}\")"
    COMPONENT Development)
endfunction()

if(TARGET encore_time)
  _encore_write_pc(encore_time encore-time)
endif()
# encore-dump describes the shared interposition library (link it before -lmpi, or
# LD_PRELOAD it); fall back to the static archive if only that one exists.
if(TARGET encore_dump)
  _encore_write_pc(encore_dump encore-dump)
elseif(TARGET encore_dump_static)
  _encore_write_pc(encore_dump_static encore-dump)
endif()
if(TARGET encore_replay)
  _encore_write_pc(encore_replay encore-replay)
endif()
