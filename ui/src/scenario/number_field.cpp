#include "kvbe/ui/scenario/number_field.h"

#include "kvbe/base/units.h"

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>

#include <cmath>

namespace kvbe {

NumberField::NumberField(const QString& unit, Parser parser, QWidget* parent)
    : QWidget(parent), m_parser(std::move(parser)) {
    m_edit = new QLineEdit(this);
    m_unit = new QLabel(unit, this);
    m_error = new QLabel(this);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_error->setVisible(false);
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(4);
    grid->setVerticalSpacing(1);
    grid->addWidget(m_edit, 0, 0);
    grid->addWidget(m_unit, 0, 1);
    grid->addWidget(m_error, 1, 0, 1, 2);
    grid->setColumnStretch(0, 1);
    connect(m_edit, &QLineEdit::textEdited, this, &NumberField::onEdited);
}

NumberField::Parser NumberField::decimal(const QString& what, double min, double max,
                                         const QString& unit) {
    return [=](const QString& text, QString* why) -> std::optional<double> {
        bool ok = false;
        const double v = text.trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(v)) {
            *why = QObject::tr("%1 must be a number of %2.").arg(what, unit);
            return std::nullopt;
        }
        if (v < min || v > max) {
            *why =
                QObject::tr("%1 must be from %2 to %3 %4.").arg(what).arg(min).arg(max).arg(unit);
            return std::nullopt;
        }
        return v;
    };
}

NumberField::Parser NumberField::tokens(const QString& what, double min, double max) {
    return [=](const QString& text, QString* why) -> std::optional<double> {
        auto v = parseTokens(text.trimmed().toStdString());
        if (!v) {
            *why = QObject::tr("%1: %2.").arg(what, QString::fromStdString(v.message()));
            return std::nullopt;
        }
        if (*v < min || *v > max) {
            *why = QObject::tr("%1 must be from %2 to %3 tokens.")
                       .arg(what, QString::fromStdString(formatTokens(min)),
                            QString::fromStdString(formatTokens(max)));
            return std::nullopt;
        }
        return *v;
    };
}

void NumberField::setValue(double v, int precision) {
    setValue(v, QString::number(v, 'g', precision));
}

void NumberField::setValue(double v, const QString& shown) {
    m_value = v;
    m_valid = true;
    m_edit->setText(shown);
    m_error->clear();
    m_error->setVisible(false);
    m_edit->setStyleSheet(QString());
}

void NumberField::showProblem(const QString& why) {
    m_value.reset();
    m_valid = false;
    m_edit->clear();
    m_error->setText(why);
    m_error->setVisible(true);
    m_edit->setStyleSheet(QStringLiteral("border: 1px solid #c0392b;"));
}

void NumberField::clearValue() {
    m_value.reset();
    m_valid = true;
    m_edit->clear();
    m_error->clear();
    m_error->setVisible(false);
    m_edit->setStyleSheet(QString());
}

void NumberField::setPlaceholder(const QString& text) {
    m_edit->setPlaceholderText(text);
}

QString NumberField::errorText() const {
    return m_valid ? QString() : m_error->text();
}

void NumberField::onEdited(const QString& text) {
    if (m_emptyAllowed && text.trimmed().isEmpty()) {
        clearValue();
        emit cleared();
        return;
    }
    QString why;
    const auto v = m_parser(text, &why);
    m_valid = v.has_value();
    m_error->setText(why);
    m_error->setVisible(!m_valid && m_reportsInPlace);
    m_edit->setStyleSheet(m_valid ? QString() : QStringLiteral("border: 1px solid #c0392b;"));
    if (!m_valid) {
        emit refused(why);
        return;
    }
    m_value = v;
    emit valueEdited(*v);
}

} // namespace kvbe
