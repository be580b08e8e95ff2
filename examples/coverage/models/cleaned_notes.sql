-- The string functions that search and cut, and regular expressions in the part of their
-- syntax Flink's Java engine and the simulator read alike: `.` leaves out every line
-- terminator, `\d` is ASCII, and REGEXP_REPLACE takes its replacement literally.
SELECT id,
  REPLACE(note, '-', ' ') AS spaced,
  POSITION('@' IN note) AS at_sign,
  LOCATE(',', note) AS first_comma,
  SPLIT_INDEX(note, ',', 1) AS second_field,
  REGEXP(note, '^[0-9]+$') AS all_digits,
  REGEXP(note, 'a.b') AS a_any_b,
  REGEXP_EXTRACT(note, '([a-z]+)@([a-z]+)\.com', 2) AS domain,
  REGEXP_EXTRACT(note, '\d+') AS first_number,
  REGEXP_EXTRACT(note, '(x)|(y)', 2) AS second_choice,
  REGEXP_EXTRACT(note, '(x)', 2) AS missing_group,
  REGEXP_REPLACE(note, '[0-9]+', '#$1') AS numbers_masked
FROM source('events')
