#pragma once

#include <QWidget>

namespace relctl::ui {

// Where rehearsals will live: teams race two releases, let a lease expire and
// prove the old holder cannot publish, on a scratch database. The rehearsal
// engine is a later issue; until then this page says so and points at the
// scripted walk-through that exists today, and offers nothing that pretends
// to run.
class RehearsalsView final : public QWidget
{
    Q_OBJECT

public:
    explicit RehearsalsView(QWidget* parent = nullptr);
};

} // namespace relctl::ui
