// PAPI counters per compute segment: libtime's (encore/papi_counters.hpp), shared with libreplay.
#pragma once

#include "encore/papi_counters.hpp"

namespace encore::dump {

using encore::CounterSetup;
using encore::setup_counters;
using encore::ThreadCounters;

}  // namespace encore::dump
