// The PDF's figures (report_document.cpp): an object in Qt's text layout whose drawing is the
// chart's SVG, rendered into the PDF as vectors. Private to ui/src/report.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QPainter>
#include <QSvgRenderer>
#include <QTextFormat>
#include <QTextObjectInterface>

#include <memory>
#include <vector>

namespace kvbe {

// The object type of a figure, and its property: the figure's index.
inline constexpr int kChartObject = QTextFormat::UserObject + 1;
inline constexpr int kFigureIndex = 1;

class ReportFigure : public QObject, public QTextObjectInterface {
    Q_OBJECT
    Q_INTERFACES(QTextObjectInterface)
  public:
    ReportFigure(const std::vector<QByteArray>& svgs, double width) : m_width(width) {
        for (const auto& s : svgs)
            m_svg.push_back(std::make_unique<QSvgRenderer>(s));
    }
    QSizeF intrinsicSize(QTextDocument*, int, const QTextFormat&) override {
        return {m_width, m_width * 9 / 16};
    }
    void drawObject(QPainter* p, const QRectF& rect, QTextDocument*, int,
                    const QTextFormat& format) override {
        const int i = format.property(kFigureIndex).toInt();
        if (i < 0 || i >= int(m_svg.size()) || !m_svg[i]->isValid()) return;
        p->save();
        m_svg[i]->render(p, rect);
        p->restore();
    }

  private:
    std::vector<std::unique_ptr<QSvgRenderer>> m_svg;
    double m_width;
};

} // namespace kvbe
