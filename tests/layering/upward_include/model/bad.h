// A model header that reaches up into measure/: the layering check must refuse it.
#pragma once

#include "measure/timing.h"
