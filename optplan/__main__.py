import sys

from optplan.cli import main

sys.exit(main())
