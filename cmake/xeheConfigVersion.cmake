# Version of the xehe CMake package (equal to Cargo.toml's version; tests/capi_examples.rs
# checks it). A request is compatible when it is not newer and has the same major version
# (for 0.x: the same minor version too).
set(PACKAGE_VERSION "0.1.0")
string(REPLACE "." ";" _xehe_v "${PACKAGE_VERSION}")
list(GET _xehe_v 0 _xehe_major)
list(GET _xehe_v 1 _xehe_minor)
set(PACKAGE_VERSION_COMPATIBLE FALSE)
if(NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION
   AND PACKAGE_FIND_VERSION_MAJOR EQUAL _xehe_major
   AND (NOT _xehe_major EQUAL 0 OR PACKAGE_FIND_VERSION_MINOR EQUAL _xehe_minor))
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
unset(_xehe_v)
unset(_xehe_major)
unset(_xehe_minor)
