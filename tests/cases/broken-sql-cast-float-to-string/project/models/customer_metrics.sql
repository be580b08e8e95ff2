SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE CAST(CAST(amount AS DOUBLE) AS STRING) <> '' GROUP BY customer_id
