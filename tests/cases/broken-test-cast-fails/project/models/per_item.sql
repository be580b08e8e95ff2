SELECT
    customer_id,
    CAST(CAST(amount AS DECIMAL(12, 2)) AS INT) AS whole
FROM source('orders')
