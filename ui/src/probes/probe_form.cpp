#include "kvbe/ui/probes/probe_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

#include <algorithm>

namespace kvbe {

namespace {

bool isPath(ProbeOptionKind k) {
    return k == ProbeOptionKind::Folder || k == ProbeOptionKind::File;
}

// What an empty field means: the catalog's words for it, else the default value.
QString placeholderOf(const ProbeOption& o) {
    if (!o.placeholder.empty()) return QString::fromUtf8(o.placeholder);
    if (o.kind == ProbeOptionKind::Model && o.defaultValue.empty())
        return ProbeForm::tr("the scenario's model");
    return QString::fromUtf8(o.defaultValue);
}

} // namespace

const ProbeOption* ProbeForm::Row::chosen() const {
    if (options.size() > 1 && choice) return options[size_t(std::max(0, choice->currentIndex()))];
    return options.front();
}

ProbeForm::ProbeForm(const ProbeDescription& probe, QWidget* parent)
    : QWidget(parent), m_probe(probe) {
    m_form = new QFormLayout(this);
    m_form->setContentsMargins(0, 0, 0, 0);
    // The rows first (a group's members share one), then their widgets: a row's index is stable.
    for (const auto& o : probe.options) {
        if (!o.inWindow()) continue;
        auto same = std::find_if(m_rows.begin(), m_rows.end(), [&o](const Row& r) {
            return !o.group.empty() && r.options.front()->group == o.group;
        });
        if (same != m_rows.end())
            same->options.push_back(&o);
        else
            m_rows.push_back(Row{{&o}});
    }
    const QString base = QString::fromUtf8(probe.key) + QLatin1Char(' ');
    for (auto& r : m_rows) {
        const ProbeOption& o = *r.options.front();
        const bool group = !o.group.empty();
        QString label = QString::fromUtf8(group ? o.group : o.label);
        if (o.kind == ProbeOptionKind::Choice && !group) {
            r.choice = new QComboBox(this);
            if (o.defaultValue.empty()) r.choice->addItem(QString());
            for (auto c : o.choices)
                r.choice->addItem(QString::fromUtf8(c));
            r.choice->setCurrentText(QString::fromUtf8(o.defaultValue));
            r.row = r.choice;
        } else if (o.kind == ProbeOptionKind::Flag && !group) {
            r.check = new QCheckBox(this);
            r.row = r.check;
        } else {
            r.edit = new QLineEdit(this);
            r.edit->setPlaceholderText(placeholderOf(o));
            r.row = group || isPath(o.kind) ? pathRow(r) : r.edit;
        }
        r.row->setToolTip(QString::fromUtf8(o.help));
        // Tests find an editor as "<key> <flag>" (a group's text by its first member's flag).
        QWidget* editor = r.edit    ? static_cast<QWidget*>(r.edit)
                          : r.check ? static_cast<QWidget*>(r.check)
                                    : static_cast<QWidget*>(r.choice);
        editor->setObjectName(base + QString::fromUtf8(o.flag));
        m_form->addRow(label + QLatin1Char(':'), r.row);
    }
    updateRows();
}

// A path, or a group's value: the text, the choice of member where there are several, and
// Browse… where the chosen member is a file or a folder.
QWidget* ProbeForm::pathRow(Row& r) {
    auto* row = new QWidget(this);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    const size_t index = size_t(&r - m_rows.data());
    if (r.options.size() > 1) {
        r.choice = new QComboBox(row);
        r.choice->setObjectName(QString::fromUtf8(m_probe.key) + QStringLiteral(" ") +
                                QString::fromUtf8(r.options.front()->group));
        for (const ProbeOption* m : r.options)
            r.choice->addItem(QString::fromUtf8(m->label), QString::fromUtf8(m->flag));
        connect(r.choice, &QComboBox::currentIndexChanged, this, [this, index] {
            const Row& changed = m_rows[index];
            changed.edit->setPlaceholderText(placeholderOf(*changed.chosen()));
            changed.edit->setToolTip(QString::fromUtf8(changed.chosen()->help));
            updateRows();
        });
        h->addWidget(r.choice);
    }
    h->addWidget(r.edit, 1);
    const bool browsable = std::any_of(r.options.begin(), r.options.end(),
                                       [](const ProbeOption* m) { return isPath(m->kind); });
    if (browsable) {
        auto* button = new QPushButton(tr("Browse…"), row);
        connect(button, &QPushButton::clicked, this, [this, index] { browse(m_rows[index]); });
        h->addWidget(button);
    }
    return row;
}

void ProbeForm::browse(const Row& r) {
    const ProbeOption& o = *r.chosen();
    const QString title = QString::fromUtf8(o.help);
    const QString path = o.kind == ProbeOptionKind::Folder
                             ? QFileDialog::getExistingDirectory(this, title)
                             : QFileDialog::getOpenFileName(this, title);
    if (!path.isEmpty()) r.edit->setText(path);
}

ProbeForm::Row* ProbeForm::rowOf(const QString& flag) {
    for (auto& r : m_rows)
        for (const ProbeOption* o : r.options)
            if (QString::fromUtf8(o->flag) == flag) return &r;
    return nullptr;
}

const ProbeForm::Row* ProbeForm::rowOf(const QString& flag) const {
    return const_cast<ProbeForm*>(this)->rowOf(flag);
}

void ProbeForm::updateRows() {
    for (const auto& r : m_rows) {
        const std::string_view with = r.options.front()->onlyWith;
        if (with.empty()) continue;
        const Row* owner = rowOf(QString::fromUtf8(with));
        m_form->setRowVisible(r.row, owner && owner->chosen()->flag == with);
    }
}

bool ProbeForm::setValue(const QString& flag, const QString& value) {
    Row* r = rowOf(flag);
    if (!r) return false;
    if (r->check) {
        r->check->setChecked(value == QLatin1String("true") || value == QLatin1String("1"));
    } else if (r->choice && !r->edit) {
        const int i = r->choice->findText(value);
        if (i < 0) return false;
        r->choice->setCurrentIndex(i);
    } else {
        if (r->choice) r->choice->setCurrentIndex(r->choice->findData(flag));
        r->edit->setText(value);
    }
    updateRows();
    return true;
}

void ProbeForm::setDefaultModel(const QString& model) {
    m_defaultModel = model;
    for (auto& r : m_rows)
        if (r.edit && r.chosen()->kind == ProbeOptionKind::Model && r.chosen()->placeholder.empty())
            r.edit->setPlaceholderText(model);
}

void ProbeForm::setDefaultGpu(const QString& gpu) {
    m_defaultGpu = gpu;
}

QStringList ProbeForm::arguments() const {
    QStringList a{QString::fromUtf8(m_probe.key)};
    // The scenario's GPU, where the probe takes a GPU preset the form does not ask for.
    if (!m_defaultGpu.isEmpty() && !rowOf(QStringLiteral("--gpu")))
        for (const auto& o : m_probe.options)
            if (std::string_view(o.flag) == "--gpu") a << QStringLiteral("--gpu") << m_defaultGpu;
    for (const auto& r : m_rows) {
        const ProbeOption& o = *r.chosen();
        const QString flag = QString::fromUtf8(o.flag);
        if (!o.onlyWith.empty()) {
            const Row* owner = rowOf(QString::fromUtf8(o.onlyWith));
            if (!owner || owner->chosen()->flag != o.onlyWith) continue;
        }
        if (r.check) {
            if (r.check->isChecked()) a << flag;
            continue;
        }
        QString v = r.edit ? r.edit->text().trimmed() : r.choice->currentText();
        if (!r.edit && v == QString::fromUtf8(o.defaultValue)) continue;
        if (v.isEmpty() && o.kind == ProbeOptionKind::Model) v = m_defaultModel;
        if (!v.isEmpty()) a << flag << v;
    }
    return a;
}

} // namespace kvbe
