// What every HTML page of the tool shares: the document around the body (styles and scripts
// inline, nothing fetched), and the environment of a run as a definition list.
#pragma once

#include <string>

#include "model/result.h"

namespace sdpa {

// A whole page. Its scripts record any error (a script's or a resource's) on the page itself and
// on <html data-page-errors="N">, make every table.sortable sortable by its headers, and set
// <html data-scripts-ran="yes"> when they reach their end: a test can tell a page that works.
std::string html_document(const std::string& title, const std::string& body);

// Device, libraries, ceilings, profiler, timing settings, command line, tool and host of a run.
std::string html_environment(const RunReport& report);

}  // namespace sdpa
