# CMake package of libxehe: find_package(xehe) then target_link_libraries(app xehe::xehe)
# (shared, libxehe.so) or xehe::xehe_static (libxehe.a). Both carry include/ (xehe.h and the
# header-only SEAL plugin xehe/seal_plugin.hpp).
#
# Where the library is looked for, first found wins:
#   XEHE_LIBRARY_DIR (cache or environment variable), then, relative to this file,
#   ../target/release, ../target/debug (a cargo build of this repository: set
#   xehe_DIR=<repo>/cmake), ../lib, ../lib64 (an installed layout).
# Result variables: xehe_FOUND, XEHE_INCLUDE_DIR, XEHE_SHARED_LIBRARY, XEHE_STATIC_LIBRARY.

get_filename_component(_xehe_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(XEHE_INCLUDE_DIR "${_xehe_root}/include")

set(_xehe_hints)
if(XEHE_LIBRARY_DIR)
  list(APPEND _xehe_hints "${XEHE_LIBRARY_DIR}")
elseif(DEFINED ENV{XEHE_LIBRARY_DIR})
  list(APPEND _xehe_hints "$ENV{XEHE_LIBRARY_DIR}")
endif()
list(APPEND _xehe_hints "${_xehe_root}/target/release" "${_xehe_root}/target/debug"
     "${_xehe_root}/lib" "${_xehe_root}/lib64")

find_library(XEHE_SHARED_LIBRARY NAMES xehe libxehe.so HINTS ${_xehe_hints} NO_DEFAULT_PATH)
find_file(XEHE_STATIC_LIBRARY NAMES libxehe.a HINTS ${_xehe_hints} NO_DEFAULT_PATH)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(xehe
  REQUIRED_VARS XEHE_SHARED_LIBRARY XEHE_INCLUDE_DIR
  VERSION_VAR xehe_VERSION)

if(xehe_FOUND AND NOT TARGET xehe::xehe)
  add_library(xehe::xehe SHARED IMPORTED)
  set_target_properties(xehe::xehe PROPERTIES
    IMPORTED_LOCATION "${XEHE_SHARED_LIBRARY}"
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${XEHE_INCLUDE_DIR}")
  if(XEHE_STATIC_LIBRARY)
    # A Rust static library needs the system libraries of the Rust standard library.
    find_package(Threads REQUIRED)
    add_library(xehe::xehe_static STATIC IMPORTED)
    set_target_properties(xehe::xehe_static PROPERTIES
      IMPORTED_LOCATION "${XEHE_STATIC_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${XEHE_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m;rt")
  endif()
endif()
unset(_xehe_hints)
unset(_xehe_root)
