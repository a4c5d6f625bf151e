// A number a user types, with its unit beside it and, under it, the reason when the text is not
// an acceptable value. Only acceptable values are emitted; the last good one stays in force.
#pragma once

#include <QWidget>

#include <functional>
#include <optional>

class QLabel;
class QLineEdit;

namespace kvbe {

class NumberField : public QWidget {
    Q_OBJECT
  public:
    // Returns the value, or sets `why` to a sentence saying what is wrong.
    using Parser = std::function<std::optional<double>(const QString& text, QString* why)>;

    NumberField(const QString& unit, Parser parser, QWidget* parent = nullptr);

    // A decimal in [min, max]; `what` names the field in messages ("Peak").
    static Parser decimal(const QString& what, double min, double max, const QString& unit);
    // A token count in [min, max], accepting "8k" and "1.5k" as core does.
    static Parser tokens(const QString& what, double min, double max);

    void setValue(double v, int precision = 6);    // shows a value without emitting
    void setValue(double v, const QString& shown); // as the text given ("70.6B")
    // Shows no value and, under the field, why there is none (core refused the inputs that
    // give it); the next setValue or edit replaces it.
    void showProblem(const QString& why);
    std::optional<double> value() const { return m_value; }
    bool isValid() const { return m_valid; }
    QString errorText() const;
    QLineEdit* edit() const { return m_edit; }
    void setPlaceholder(const QString& text);
    // An optional value: empty text is accepted as "none" (the placeholder says what applies
    // then) and emits cleared().
    void setEmptyAllowed(bool on) { m_emptyAllowed = on; }
    // Shows no value, without emitting (the placeholder shows).
    void clearValue();
    // Refusals go out as refused() only, for a message elsewhere; the field keeps its red frame.
    void setReportsInPlace(bool on) { m_reportsInPlace = on; }

  signals:
    void valueEdited(double value);
    void cleared();
    // The text typed is not a value: why, as a sentence naming the field.
    void refused(const QString& why);

  private:
    void onEdited(const QString& text);

    QLineEdit* m_edit;
    QLabel* m_unit;
    QLabel* m_error;
    Parser m_parser;
    std::optional<double> m_value;
    bool m_valid = true;
    bool m_emptyAllowed = false;
    bool m_reportsInPlace = true;
};

} // namespace kvbe
