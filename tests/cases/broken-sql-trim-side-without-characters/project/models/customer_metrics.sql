SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE TRIM(LEADING FROM CAST(customer_id AS STRING)) <> '' GROUP BY customer_id
