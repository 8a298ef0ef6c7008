#pragma once

#include "consoletypes.h"

#include <QWidget>
#include <functional>
#include <optional>

class QAction;
class QCheckBox;
class QComboBox;
class QFrame;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTableView;
class QTimer;
class QUrl;
class QVBoxLayout;

namespace relctl::ui {

class AuditModel;
class ConsoleSession;

// The audit browser: filters (all applied by the server; each with a label),
// a time range (presets that follow the clock, the minutes around an event,
// or a typed from/to), the lazily loaded table sorted by the server (a click
// on a sortable header), a bar offering new events that were not put above
// the row being read (or that a sort cannot show in place), how many events
// match as far as it is known, copying the selected rows as text for an
// incident write-up, and export of every filtered event, in the table's
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
    // Where the export dialog opens and the name it proposes: the last
    // directory used (kept in the settings), else the documents folder, else
    // home; "relctl-audit-2026-12-06-1430.csv" from the UTC time `nowMs`.
    QString exportDirectory() const;
    static QString exportFileName(qint64 nowMs, bool json);
    // How a finished export's file and folder are opened (QDesktopServices by
    // default); false: they could not be. Tests replace it.
    void setUrlOpener(std::function<bool(const QUrl&)> open);
    // The selected rows as tab-separated text with a header line (what Copy
    // rows and Ctrl+C put on the clipboard); empty when none is selected.
    QString selectedRowsText() const;
    void copySelectedRows();
    // Whether this login may read the trail. When it may not, the table's
    // place holds `why` (a plain sentence) and the filters are disabled.
    void setTrailReadable(bool readable, const QString& why);

signals:
    void eventSelected(qint64 eventId, qint64 atMs, bool rejected);
    // A status card for this job or op id (empty key: one to be typed).
    void statusRequested(const relctl::ui::StatusLookup& lookup);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // The constructor's parts, in the order it calls them.
    QVBoxLayout* buildFilterRows(); // the filters, the range, Status… and Export, in two rows
    void buildNewEventsBar();       // "N new events — Show", floating over the table
    void buildExportStatus();       // the count, an export's progress and outcome, below the table
    void buildTable();              // the table, its server-side sort and its empty-result note
    void connectFilters();          // each filter applies as it changes (typing: once it pauses)
    void connectActions();          // Status…, the row menu, the export formats, the selected row

    void exportRows(bool json);
    void showRowMenu(const QPoint& at);
    void placeNewEvents();
    void showNewEvents(int count);
    void updateReading();
    void showEmptyResult(bool empty);
    QString emptyResultText() const;
    void rangeChanged();
    void typedRangeEdited();
    bool showRangeState();
    void updateCount();
    void openExported(bool folder);

    ConsoleSession* m_session;
    AuditModel* m_model;
    QComboBox* m_env;
    QLineEdit* m_job;
    QComboBox* m_operation;
    QComboBox* m_reason;
    QCheckBox* m_refusedOnly;
    QLineEdit* m_text;
    QTimer* m_typing; // runs from a key in the job or search field until the pause is over
    QComboBox* m_range;
    QLineEdit* m_from;
    QLineEdit* m_to;
    QLabel* m_rangeNote;             // why a typed range is not applied
    QList<QWidget*> m_rangeFields;   // the from/to labels and fields, shown for a custom range
    QList<QWidget*> m_filterWidgets; // disabled while the trail cannot be read
    // The event "around selected event" is around, once chosen; its row is
    // selected again when the narrowed list loads it.
    std::optional<qint64> m_aroundEvent;
    qint64 m_aroundAtMs = 0;
    QString m_aroundText; // the from/to as filled in for it: typing over them makes the range custom
    bool m_reselectAround = false;
    QStackedWidget* m_tableArea; // the table, or why the trail cannot be read
    QLabel* m_unreadable;
    QLabel* m_count;
    QTableView* m_table;
    QLabel* m_empty; // over the table: the server answered, and nothing matched
    QFrame* m_newEvents;
    QLabel* m_newEventsLabel;
    QWidget* m_exporting;
    QProgressBar* m_exportProgress;
    QLabel* m_exportLabel;
    QPushButton* m_exportCancel;
    QPushButton* m_exportOpen;
    QPushButton* m_exportShow;
    QLabel* m_exportNote; // opening the file or its folder failed
    QPushButton* m_export;
    QPushButton* m_status;
    QAction* m_csv;
    QAction* m_json;
    QString m_exportPath; // the file's name, as the messages say it
    QString m_exportFile; // its full path, for Open and Show in folder
    QString m_exportDir;  // where the last export went: the next dialog opens there
    std::function<bool(const QUrl&)> m_openUrl;
    bool m_readable = true;
    bool m_sized = false;
};

} // namespace relctl::ui
