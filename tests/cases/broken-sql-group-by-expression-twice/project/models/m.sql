SELECT UPPER(note) AS note, COUNT(*) AS orders FROM source('orders') GROUP BY UPPER(note), UPPER(note)
