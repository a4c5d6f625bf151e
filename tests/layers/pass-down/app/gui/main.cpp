#include "kvbe/ui/widgets/ask.h"
