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

# Qt: the GUI needs Widgets, Charts and Svg; the tests need only Core and Test.
set(KVBE_HAVE_GUI OFF)
if(NOT KVBE_BUILD_GUI STREQUAL "OFF")
  find_package(Qt6 6.4 QUIET COMPONENTS Core Gui Widgets Charts Svg SvgWidgets PrintSupport Test)
  if(Qt6Widgets_FOUND AND Qt6Charts_FOUND AND Qt6Svg_FOUND)
    set(KVBE_HAVE_GUI ON)
  elseif(KVBE_BUILD_GUI STREQUAL "ON")
    message(FATAL_ERROR "KVBE_BUILD_GUI=ON but Qt 6 Widgets/Charts/Svg were not found: "
                        "install qt6-base-dev qt6-charts-dev qt6-svg-dev, or configure with "
                        "-DKVBE_BUILD_GUI=OFF")
  endif()
endif()
find_package(Qt6 6.4 QUIET COMPONENTS Core Test)
set(KVBE_HAVE_QTTEST ${Qt6Test_FOUND})
if(KVBE_HAVE_QTTEST)
  set(CMAKE_AUTOMOC ON)
endif()

set(KVBE_HAVE_URING OFF)
if(NOT KVBE_WITH_URING STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(URING QUIET IMPORTED_TARGET liburing)
  endif()
  if(URING_FOUND)
    set(KVBE_HAVE_URING ON)
  elseif(KVBE_WITH_URING STREQUAL "ON")
    message(FATAL_ERROR "KVBE_WITH_URING=ON but liburing was not found: install liburing-dev")
  endif()
endif()

set(KVBE_HAVE_CUDA OFF)
if(NOT KVBE_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
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
    message(FATAL_ERROR "KVBE_WITH_CUDA=ON but no CUDA toolkit was found (looked in /usr/local/cuda)")
  endif()
endif()

find_package(benchmark QUIET)
set(KVBE_HAVE_BENCHMARK ${benchmark_FOUND})
