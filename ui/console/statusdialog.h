#pragma once

#include "consoletypes.h"

#include <QDialog>

class QComboBox;
class QLineEdit;

namespace relctl::ui {

class StatusCard;

// "What became of …?": a job's name or an op id typed or pasted (or asked
// from an audit row), and its status card. Not modal: the console keeps
// updating while it is open, and so does the card. The kind (job or op id)
// is chosen, never guessed from the text.
class StatusDialog final : public QDialog
{
    Q_OBJECT

public:
    explicit StatusDialog(QWidget* parent = nullptr);

    StatusCard* card() const { return m_card; }
    QLineEdit* keyField() const { return m_key; }
    QComboBox* kindBox() const { return m_kind; }

    // Shows the lookup in the fields, the card as looking, and asks.
    void lookUp(const StatusLookup& lookup);
    // Answers to anything but the card's current lookup are dropped: the
    // reviewer has asked about something else since.
    void showStatus(const StatusLookup& lookup, const relctl::JobStatus& status);
    void showFailure(const StatusLookup& lookup, const QString& message);

signals:
    void lookupRequested(const relctl::ui::StatusLookup& lookup);

private:
    void lookUpTyped();

    QComboBox* m_kind;
    QLineEdit* m_key;
    StatusCard* m_card;
};

} // namespace relctl::ui
