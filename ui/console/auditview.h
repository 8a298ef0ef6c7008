#pragma once

#include "consoletypes.h"

#include <QWidget>

class QAction;
class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QFrame;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableView;
class QTimer;

namespace relctl::ui {

class AuditModel;
class ConsoleSession;

// The audit browser: filters (all applied by the server), the lazily loaded
// table sorted by the server (a click on a sortable header), a bar offering
// new events that were not put above the row being read (or that a sort
// cannot show in place), and export of every filtered event, in the table's
// order, on a worker of its own. "What became of …?" on a row (its context
// menu) or from the Status… button asks for a job's or an op id's status card.
class AuditView final : public QWidget
{
    Q_OBJECT

public:
    AuditView(ConsoleSession* session, QWidget* parent = nullptr);

    QTableView* table() const { return m_table; }
    QSize sizeHint() const override;
    // Selects the event's row when it is loaded (the timeline asks).
    void selectEvent(qint64 eventId);
    // For a loaded event that records what relctl run stopped (a release
    // whose detail has `stopped`): that, and what it could not stop, in
    // words; empty otherwise.
    QString stopNote(qint64 eventId) const;
    void setEnvironments(const QStringList& names);
    void applyFilter();
    // How long typing in the job or search field must pause before the
    // filter is applied: one query per pause, not one per key.
    static constexpr int typingPauseMs = 300;
    // Starts an export of the filtered events to `path` (the Export menu asks for
    // it), with ".csv" or ".json" appended when the name has no extension.
    void exportTo(const QString& path, bool json);

signals:
    void eventSelected(qint64 eventId, qint64 atMs, bool rejected);
    // A status card for this job or op id (empty key: one to be typed).
    void statusRequested(const relctl::ui::StatusLookup& lookup);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // The constructor's parts, in the order it calls them.
    QHBoxLayout* buildFilterRow(); // the filters, Status… and Export, laid out in a row
    void buildNewEventsBar();      // "N new events — Show", floating over the table
    void buildExportStatus();      // an export's progress and outcome, below the table
    void buildTable();             // the table, its server-side sort and its empty-result note
    void connectFilters();         // each filter applies as it changes (typing: once it pauses)
    void connectActions();         // Status…, the row menu, the export formats, the selected row

    void exportRows(bool json);
    void showRowMenu(const QPoint& at);
    void placeNewEvents();
    void showNewEvents(int count);
    void updateReading();
    void showEmptyResult(bool empty);
    QString emptyResultText() const;
    void rangeChanged();
    bool customRangeValid() const;

    ConsoleSession* m_session;
    AuditModel* m_model;
    QComboBox* m_env;
    QLineEdit* m_job;
    QComboBox* m_operation;
    QComboBox* m_reason;
    QCheckBox* m_refusedOnly;
    QLineEdit* m_text;
    QTimer* m_typing; // runs from a key in the job or search field until the pause is over
    QComboBox* m_since;
    QDateTimeEdit* m_from;
    QDateTimeEdit* m_to;
    QTableView* m_table;
    QLabel* m_empty; // over the table: the server answered, and nothing matched
    QFrame* m_newEvents;
    QLabel* m_newEventsLabel;
    QWidget* m_exporting;
    QProgressBar* m_exportProgress;
    QLabel* m_exportLabel;
    QPushButton* m_exportCancel;
    QPushButton* m_export;
    QPushButton* m_status;
    QAction* m_csv;
    QAction* m_json;
    QString m_exportPath;
    QString m_exportDir; // where the last export went: the next dialog opens there
    bool m_sized = false;
};

} // namespace relctl::ui
