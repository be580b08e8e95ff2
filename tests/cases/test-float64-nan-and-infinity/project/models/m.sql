SELECT id, CAST(note AS DOUBLE) AS x FROM source('ev')
