"""Reports the laws ask for, built from the store (no streamlit here: the CLI uses them too).

- semester report (BG Anexo I XLII): passengers by fare class, km and trips run, IPK per line,
  maintenance costs entered by the operator — `semester.build_semester_report`;
- monthly operating report (BG art. 62-VII): per line, passengers by payment form, km run,
  drivers and inspectors (entered), trips programmed and run — `monthly.build_monthly_report`;
- annual renewal dossier per operator or lot (BG art. 32, 38, 56-58, 72; CGS art. 2, 20-II) —
  `annual.build_annual_dossier` (its tables in `annual_tables`, the verdict and score breakdown
  in `annual_verdict`, the methodology text in `annual_methodology`; the year's tables every
  operator's dossier reads alike, read and hashed once, in `annual.read_year_inputs`).

Each builder returns a `model.ReportData` (named tables, sections, charts, the reproducibility
block); `render_pdf.to_pdf`, `render_xlsx.to_xlsx` and `render_csv.to_csv` write it.
"""
