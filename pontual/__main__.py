import sys

from pontual.cli import main

sys.exit(main())
