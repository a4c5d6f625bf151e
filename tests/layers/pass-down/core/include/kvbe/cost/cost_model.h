#pragma once

#include "kvbe/base/result.h"
