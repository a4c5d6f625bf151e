# Finds what the build needs. Header-only dependencies may also come from third_party/
# (git-ignored), so that a GPU server without Debian packages can build core and the CLI.

set(KVBE_THIRD_PARTY ${PROJECT_SOURCE_DIR}/third_party)

# kvbe_header_only(TARGET INCLUDE_DIR PROBE_FILE DEBIAN_PACKAGE): when find_package did not
# provide TARGET, make it from headers under third_party/, or stop with what to install.
function(kvbe_header_only target dir probe package)
  if(TARGET ${target})
    return()
  endif()
  if(NOT EXISTS ${dir}/${probe})
    message(FATAL_ERROR "${target} not found: install ${package}, or put ${probe} under ${dir}")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  target_include_directories(${target} SYSTEM INTERFACE ${dir})
  message(STATUS "${target}: using ${dir}/${probe}")
endfunction()

find_package(nlohmann_json 3.10 QUIET)
kvbe_header_only(nlohmann_json::nlohmann_json ${KVBE_THIRD_PARTY} nlohmann/json.hpp nlohmann-json3-dev)
find_package(CLI11 CONFIG QUIET)
kvbe_header_only(CLI11::CLI11 ${KVBE_THIRD_PARTY} CLI/CLI.hpp libcli11-dev)
# Eigen: least-squares fitting in core.
find_package(Eigen3 3.3 QUIET NO_MODULE)
kvbe_header_only(Eigen3::Eigen ${KVBE_THIRD_PARTY}/eigen3 Eigen/Dense libeigen3-dev)

find_package(Threads REQUIRED)

# simdjson: the trace reader's JSON Lines parser (core). Debian's libsimdjson-dev (a shared library
# with a CMake config), or simdjson.h and simdjson.cpp (the single-header release) under
# third_party/simdjson/, built here as a static library.
find_package(simdjson CONFIG QUIET)
if(NOT TARGET simdjson::simdjson)
  if(NOT EXISTS ${KVBE_THIRD_PARTY}/simdjson/simdjson.cpp)
    message(FATAL_ERROR "simdjson not found: install libsimdjson-dev, or put simdjson.h and "
                        "simdjson.cpp (its single-header release) under ${KVBE_THIRD_PARTY}/simdjson")
  endif()
  add_library(kvbe_simdjson STATIC ${KVBE_THIRD_PARTY}/simdjson/simdjson.cpp)
  target_include_directories(kvbe_simdjson SYSTEM PUBLIC ${KVBE_THIRD_PARTY}/simdjson)
  set_target_properties(kvbe_simdjson PROPERTIES POSITION_INDEPENDENT_CODE ON AUTOMOC OFF)
  add_library(simdjson::simdjson ALIAS kvbe_simdjson)
  message(STATUS "simdjson::simdjson: using ${KVBE_THIRD_PARTY}/simdjson/simdjson.cpp")
endif()

# Qt: the GUI needs Widgets, Charts and Svg; the tests need only Core and Test.
# The Debian 12 package that holds each component's CMake files (scripts/install-deps installs them).
set(KVBE_QT_PACKAGE_Core qt6-base-dev)
set(KVBE_QT_PACKAGE_Gui qt6-base-dev)
set(KVBE_QT_PACKAGE_Widgets qt6-base-dev)
set(KVBE_QT_PACKAGE_PrintSupport qt6-base-dev)
set(KVBE_QT_PACKAGE_Test qt6-base-dev)
set(KVBE_QT_PACKAGE_OpenGL libqt6opengl6-dev)
set(KVBE_QT_PACKAGE_OpenGLWidgets libqt6opengl6-dev)
set(KVBE_QT_PACKAGE_Charts qt6-charts-dev)
set(KVBE_QT_PACKAGE_Svg qt6-svg-dev)
set(KVBE_QT_PACKAGE_SvgWidgets qt6-svg-dev)

# kvbe_qt_missing(OUT COMPONENT...): one sentence per component that find_package(Qt6) did not
# find, with Qt's own reason (Qt6<C>_NOT_FOUND_MESSAGE names the dependency that failed, e.g.
# Qt6Charts needs Qt6OpenGL) and the Debian package that provides it.
function(kvbe_qt_missing out)
  set(lines "")
  foreach(c ${ARGN})
    if(NOT Qt6${c}_FOUND)
      set(reason "${Qt6${c}_NOT_FOUND_MESSAGE}")
      if(reason STREQUAL "")
        set(reason "Qt6${c}Config.cmake was not found")
      endif()
      string(REGEX REPLACE "[ \t\r\n]+" " " reason "${reason}")
      # The package to install: the dependency's when Qt blames one (Qt6Charts needs Qt6OpenGL,
      # from libqt6opengl6-dev), else the component's own.
      set(pkgs ${KVBE_QT_PACKAGE_${c}})
      if(reason MATCHES "dependency Qt6([A-Za-z]+) could not be found")
        set(dep ${CMAKE_MATCH_1})
        if(DEFINED KVBE_QT_PACKAGE_${dep})
          set(pkgs ${KVBE_QT_PACKAGE_${dep}})
        else()
          set(pkgs "the package that provides Qt6${dep}")
        endif()
      endif()
      list(REMOVE_DUPLICATES pkgs)
      string(REPLACE ";" " " pkgs "${pkgs}")
      string(APPEND lines "\n  Qt6${c}: ${reason}\n    -> install: ${pkgs}")
    endif()
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

set(KVBE_HAVE_GUI OFF)
set(KVBE_GUI_COMPONENTS Core Gui Widgets Charts Svg SvgWidgets PrintSupport)
if(NOT KVBE_BUILD_GUI STREQUAL "OFF")
  # OPTIONAL_COMPONENTS: Qt6Config stops at the first missing required component, and every
  # missing one should be named.
  find_package(Qt6 6.4 QUIET OPTIONAL_COMPONENTS ${KVBE_GUI_COMPONENTS} Test)
  kvbe_qt_missing(kvbe_qt_gui_missing ${KVBE_GUI_COMPONENTS})
  if(kvbe_qt_gui_missing STREQUAL "")
    set(KVBE_HAVE_GUI ON)
  elseif(KVBE_BUILD_GUI STREQUAL "ON")
    message(FATAL_ERROR "KVBE_BUILD_GUI=ON but these Qt 6 components were not found:"
                        "${kvbe_qt_gui_missing}\n"
                        "Run scripts/install-deps, or configure with -DKVBE_BUILD_GUI=OFF.")
  else()
    message(STATUS "GUI not built; missing Qt 6 components:${kvbe_qt_gui_missing}")
  endif()
endif()
find_package(Qt6 6.4 QUIET OPTIONAL_COMPONENTS Core Test)
set(KVBE_HAVE_QTTEST ${Qt6Test_FOUND})
if(NOT KVBE_HAVE_QTTEST AND BUILD_TESTING AND KVBE_REQUIRE_TESTS)
  kvbe_qt_missing(kvbe_qt_test_missing Core Test)
  message(FATAL_ERROR "KVBE_REQUIRE_TESTS=ON but Qt 6 Test was not found:${kvbe_qt_test_missing}")
endif()

set(KVBE_HAVE_URING OFF)
if(NOT KVBE_WITH_URING STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(URING QUIET IMPORTED_TARGET liburing)
  endif()
  if(URING_FOUND)
    set(KVBE_HAVE_URING ON)
  elseif(KVBE_WITH_URING STREQUAL "ON" AND NOT PkgConfig_FOUND)
    message(FATAL_ERROR "KVBE_WITH_URING=ON but pkg-config was not found (it finds liburing): "
                        "install pkg-config")
  elseif(KVBE_WITH_URING STREQUAL "ON")
    message(FATAL_ERROR "KVBE_WITH_URING=ON but liburing was not found (pkg-config liburing): "
                        "install liburing-dev")
  endif()
endif()

# libcurl: the serving probe's HTTP client (kvbe-cli probe serving). Without it the probe still
# exists and says in one sentence that this build has no HTTP client.
set(KVBE_HAVE_CURL OFF)
if(NOT KVBE_WITH_CURL STREQUAL "OFF")
  find_package(CURL 7.68 QUIET)
  if(CURL_FOUND)
    set(KVBE_HAVE_CURL ON)
  elseif(KVBE_WITH_CURL STREQUAL "ON")
    message(FATAL_ERROR "KVBE_WITH_CURL=ON but libcurl was not found (FindCURL): "
                        "install libcurl4-openssl-dev, or configure with -DKVBE_WITH_CURL=OFF")
  else()
    message(STATUS "serving probe without HTTP client: libcurl not found (install libcurl4-openssl-dev)")
  endif()
endif()

set(KVBE_HAVE_CUDA OFF)
if(NOT KVBE_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  # nvcc from CUDACXX or -DCMAKE_CUDA_COMPILER (check_language reads both), else from PATH,
  # $CUDA_HOME or $CUDA_PATH, else the toolkit installer's default prefix.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(KVBE_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATH_SUFFIXES bin
                 PATHS /usr/local/cuda/bin)
    if(KVBE_NVCC)
      set(CMAKE_CUDA_COMPILER ${KVBE_NVCC})
    endif()
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # No GPU is needed at configure time: build for A100, Ada and Hopper.
      set(CMAKE_CUDA_ARCHITECTURES "80;89;90")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(KVBE_HAVE_CUDA ON)
    endif()
  endif()
  if(NOT KVBE_HAVE_CUDA AND KVBE_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "KVBE_WITH_CUDA=ON but no CUDA toolkit was found (nvcc not on PATH, $CUDA_HOME, $CUDA_PATH or /usr/local/cuda; set CUDACXX)")
  endif()
endif()

set(KVBE_HAVE_BENCHMARK OFF)
if(NOT KVBE_WITH_BENCHMARK STREQUAL "OFF")
  find_package(benchmark QUIET)
  set(KVBE_HAVE_BENCHMARK ${benchmark_FOUND})
  if(NOT benchmark_FOUND AND KVBE_WITH_BENCHMARK STREQUAL "ON")
    message(FATAL_ERROR "KVBE_WITH_BENCHMARK=ON but Google Benchmark was not found "
                        "(benchmarkConfig.cmake): install libbenchmark-dev")
  endif()
endif()
