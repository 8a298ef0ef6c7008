#pragma once

#include "commandline.h"

#include <string>
#include <string_view>

namespace relctl::cli {

// What is generated from the grammar (CommandLine::reference) and the
// catalogue (relctl/catalogue.h): the manual page relctl(1), the completion
// scripts and the command reference in docs/. The build writes the first
// three (relctl-docgen); a test compares the fourth with the checked-in file.

std::string manPage(const CommandReference& root);
// shell: "bash" or "zsh"; anything else throws Error(Usage).
std::string completionScript(const CommandReference& root, std::string_view shell);
std::string markdownReference(const CommandReference& root);

} // namespace relctl::cli
