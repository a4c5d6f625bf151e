# Precompiled headers (target_precompile_headers): the standard library, nlohmann_json, Qt Core,
# Test, Widgets and Charts headers that nearly every file of a target includes are parsed once per
# target instead of once per file. Parsing them was most of a widget file's compile time (4.2 of
# 4.6 CPU-s for tst_ui_controls.cpp); see README ("The first run"). The lists hold third-party
# headers only, so a file that forgets one of the project's own includes still fails to build.
# The tests of one folder share one set (kvbe_test_pch below). KVBE_PCH=OFF compiles without.
option(KVBE_PCH "Precompile the standard, nlohmann_json and Qt headers" ON)

set(KVBE_PCH_STD
    <algorithm> <array> <cmath> <cstdint> <cstdio> <functional> <limits> <map> <memory>
    <optional> <set> <span> <string> <string_view> <unordered_map> <utility> <vector>)
set(KVBE_PCH_JSON <nlohmann/json.hpp>)
# Qt Core and Test, for every test.
set(KVBE_PCH_QT_TEST
    <QByteArray> <QDir> <QElapsedTimer> <QFile> <QFileInfo> <QJsonArray> <QJsonDocument>
    <QJsonObject> <QProcess> <QRegularExpression> <QSignalSpy> <QString> <QStringList>
    <QTemporaryDir> <QTest>)
# Qt Widgets, Gui and Charts: the explorer's library and its widget tests.
set(KVBE_PCH_QT_WIDGETS
    <QAbstractTableModel> <QApplication> <QAreaSeries> <QChartView> <QCheckBox> <QColor>
    <QComboBox> <QDialog> <QDockWidget> <QFileDialog> <QFont> <QFontMetricsF> <QFormLayout>
    <QGraphicsSimpleTextItem> <QGroupBox> <QHBoxLayout> <QHeaderView> <QLabel> <QLineEdit>
    <QLineSeries> <QMainWindow> <QMenu> <QMessageBox> <QPainter> <QPen> <QPointF> <QPointer>
    <QProgressBar> <QPushButton> <QScatterSeries> <QScrollArea> <QSlider> <QSpinBox>
    <QStatusBar> <QTabWidget> <QTableView> <QTableWidget> <QTimer> <QToolButton> <QValueAxis>
    <QVBoxLayout> <QWidget>)

# kvbe_pch(TARGET HEADERS...): precompile HEADERS for TARGET's C++ files.
function(kvbe_pch target)
  if(KVBE_PCH)
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()

# kvbe_test_pch(TEST LIBS...): TEST reuses the headers precompiled for the tests of its folder that
# link the same LIBS (one holder target per folder and set of libraries, compiled with the same
# definitions and options as the tests, which a precompiled header requires).
function(kvbe_test_pch name)
  if(NOT KVBE_PCH)
    return()
  endif()
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  string(MAKE_C_IDENTIFIER "kvbe_pch_${folder}_${ARGN}" holder)
  if(NOT TARGET ${holder})
    add_library(${holder} OBJECT ${PROJECT_SOURCE_DIR}/tests/pch_holder.cpp)
    target_link_libraries(${holder} PRIVATE Qt6::Test ${ARGN})
    kvbe_test_definitions(${holder})
    set(headers ${KVBE_PCH_STD} ${KVBE_PCH_JSON} ${KVBE_PCH_QT_TEST})
    if("kvbe::ui" IN_LIST ARGN)
      list(APPEND headers ${KVBE_PCH_QT_WIDGETS})
    endif()
    target_precompile_headers(${holder} PRIVATE ${headers})
  endif()
  target_precompile_headers(${name} REUSE_FROM ${holder})
  # AUTOMOC's mocs_compilation.cpp of a test is nearly empty (a test includes its own .moc):
  # loading the header would cost it ten times its compile time.
  set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/${name}_autogen/mocs_compilation.cpp
                              TARGET_DIRECTORY ${name} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
